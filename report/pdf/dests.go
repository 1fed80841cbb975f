package pdf

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

// Chromium (Skia) writes every element an internal link points at as a named destination in
// the PDF's catalog, /Dests << /section-id [PAGE 0 R /XYZ x y 0] … >>, and the pages as a tree
// of /Type /Pages objects whose /Kids list them in order, all in plain (uncompressed) object
// dictionaries. DestinationPages reads the two and says on which page (1-based) each named
// destination lands: the page numbers of the report's contents, read from the printed PDF
// itself rather than guessed from the screen layout.

var (
	objRe   = regexp.MustCompile(`(?s)(\d+) 0 obj\s*(.*?)endobj`)
	kidsRe  = regexp.MustCompile(`/Kids\s*\[([^\]]*)\]`)
	refRe   = regexp.MustCompile(`(\d+) 0 R`)
	destsRe = regexp.MustCompile(`/Dests\s+(\d+) 0 R`)
	destRe  = regexp.MustCompile(`/([^\s/\[\]<>()]+)\s*\[\s*(\d+) 0 R`)
	rootRe  = regexp.MustCompile(`/Root\s+(\d+) 0 R`)
	pagesRe = regexp.MustCompile(`/Pages\s+(\d+) 0 R`)
)

// DestinationPages returns the 1-based page of each named destination in a PDF printed by
// Chromium. Names are PDF names as written (a section id is written as it is, "#xx" escapes
// decoded).
func DestinationPages(pdf []byte) (map[string]int, error) {
	objs := map[int][]byte{}
	for _, m := range objRe.FindAllSubmatch(pdf, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		objs[n] = m[2]
	}
	root := rootRe.FindSubmatch(pdf)
	if root == nil {
		return nil, fmt.Errorf("PDF has no /Root")
	}
	rootN, _ := strconv.Atoi(string(root[1]))
	cat, ok := objs[rootN]
	if !ok {
		return nil, fmt.Errorf("PDF catalog %d not found (object streams are not read)", rootN)
	}
	pm := pagesRe.FindSubmatch(cat)
	if pm == nil {
		return nil, fmt.Errorf("PDF catalog has no /Pages")
	}
	pagesN, _ := strconv.Atoi(string(pm[1]))
	order := map[int]int{} // page object → 1-based page number
	var walk func(n, depth int) error
	walk = func(n, depth int) error {
		if depth > 32 {
			return fmt.Errorf("PDF page tree deeper than 32")
		}
		body, ok := objs[n]
		if !ok {
			return fmt.Errorf("PDF page tree object %d not found", n)
		}
		if !bytes.Contains(body, []byte("/Type /Pages")) {
			order[n] = len(order) + 1
			return nil
		}
		k := kidsRe.FindSubmatch(body)
		if k == nil {
			return nil
		}
		for _, r := range refRe.FindAllSubmatch(k[1], -1) {
			kid, _ := strconv.Atoi(string(r[1]))
			if err := walk(kid, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(pagesN, 0); err != nil {
		return nil, err
	}
	out := map[string]int{}
	dm := destsRe.FindSubmatch(cat)
	if dm == nil {
		return out, nil // no internal links: no destinations
	}
	destsN, _ := strconv.Atoi(string(dm[1]))
	dests, ok := objs[destsN]
	if !ok {
		return nil, fmt.Errorf("PDF /Dests object %d not found", destsN)
	}
	for _, m := range destRe.FindAllSubmatch(dests, -1) {
		page, _ := strconv.Atoi(string(m[2]))
		if p, ok := order[page]; ok {
			out[unescapeName(string(m[1]))] = p
		}
	}
	return out, nil
}

// unescapeName decodes a PDF name's #xx escapes.
func unescapeName(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}
