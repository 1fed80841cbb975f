package capacity

import (
	"github.com/servebench/servebench"
)

// Settled reports whether a level's verdict for uc can no longer change with more requests, at
// 95% confidence: every thresholded metric's interval of the use case's statistic (the mean's
// Student t interval, a percentile's order-statistic interval; see servebench.Summary) lies
// wholly on one side of its threshold, or at least one lies wholly on the failing side (the
// level fails whatever the others do). A metric with no interval yet (fewer than 2 requests, a
// withheld percentile) is unsettled. The success rate does not hold a level open: its verdict
// is taken on the requests measured.
func Settled(uc servebench.UseCase, c servebench.CellResult) bool {
	st := uc.Statistic
	if st == "" {
		st = servebench.StatMean
	}
	ks := Checks(uc.Thresholds)
	if len(ks) == 0 {
		return true
	}
	all := true
	for _, k := range ks {
		s := summary(&c, k.Metric)
		iv := s.PickCI95(st)
		if iv == nil {
			all = false
			continue
		}
		pass, fail := k.Holds(iv.High) && k.Holds(iv.Low), !k.Holds(iv.High) && !k.Holds(iv.Low)
		if fail {
			return true
		}
		if !pass {
			all = false
		}
	}
	return all
}
