package store

import (
	"github.com/servebench/servebench"
)

// ReadRecordsChecked reads requests.jsonl as ReadRecords does and also counts its lines that
// gave no record: torn lines with nothing whole after the tear, and lines that decode but are
// not servebench records (no cell: a line of some other file). Those are left out of recs. lines
// is the number of complete lines read.
func ReadRecordsChecked(path string) (recs []servebench.Record, lines, unreadable int, err error) {
	f, err := openRunFile(path, limitFor(path))
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	err = eachLine(f, func(line []byte) {
		lines++
		rec, _, ok := parseRecordLine(line)
		if !ok || rec.Scenario == "" || rec.LoadMode == "" {
			unreadable++
			return
		}
		recs = append(recs, rec)
	})
	return recs, lines, unreadable, err
}
