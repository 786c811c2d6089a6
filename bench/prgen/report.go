package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// table prints rows with their ratios and verdicts.
func table(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "runs\tprgen\tprgen in process\tkubectl kustomize\tkustomize/prgen\ttarget")
	for _, r := range rows {
		kustomize, ratio := "-", "-"
		if r.kustomize > 0 {
			kustomize, ratio = seconds(r.kustomize), fmt.Sprintf("%.0f×", r.ratio())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.runs, seconds(r.prgen), seconds(r.inProcess), kustomize, ratio, r.verdict())
	}
	return tw.Flush()
}

func (r row) ratio() float64 { return r.kustomize.Seconds() / r.prgen.Seconds() }

// verdict says whether the row meets its target of issue 28 (judged on
// the prgen command's time), or "" when the row has none.
func (r row) verdict() string {
	switch {
	case r.runs == ratioRuns && r.kustomize == 0:
		return fmt.Sprintf("≥ %d×: kustomize not measured", minRatio)
	case r.runs == ratioRuns:
		return fmt.Sprintf("≥ %d×: %s", minRatio, met(r.ratio() >= minRatio))
	case r.runs == timeRuns:
		return fmt.Sprintf("≤ %s: %s", seconds(maxTime), met(r.prgen <= maxTime))
	}
	return ""
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
