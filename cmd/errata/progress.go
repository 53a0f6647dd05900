package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/errata-dev/errata/projections/replay"
)

// progressBar renders replay progress: a redrawn bar on a terminal, or a
// line every few seconds when stderr is a file or a pipe (CI logs).
type progressBar struct {
	w        io.Writer
	label    string
	tty      bool
	last     replay.Progress
	lastLine time.Time
	drawn    bool
	// unit names what is counted: "events" unless set.
	unit string
}

func newProgressBar(w io.Writer, label string) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, label: label, tty: tty, unit: "events"}
}

func (b *progressBar) update(p replay.Progress) {
	b.last = p
	if b.tty {
		fmt.Fprintf(b.w, "\r%s", formatProgressOf(b.label, b.unit, p))
		b.drawn = true
		return
	}
	if time.Since(b.lastLine) >= 5*time.Second {
		fmt.Fprintln(b.w, formatProgressOf(b.label, b.unit, p))
		b.lastLine = time.Now()
	}
}

func (b *progressBar) finish() {
	if b.tty && b.drawn {
		fmt.Fprintf(b.w, "\r%s\n", formatProgressOf(b.label, b.unit, b.last))
		return
	}
	fmt.Fprintln(b.w, formatProgressOf(b.label, b.unit, b.last))
}

// formatProgress renders e.g.
// "serving g2 [#########-----------]  45%  9,000/20,000 events  8,100 ev/s  ETA 1s".
func formatProgress(label string, p replay.Progress) string {
	return formatProgressOf(label, "events", p)
}

// formatProgressOf counts unit ("events" rates as "ev/s", any other unit as
// "<unit>/s").
func formatProgressOf(label, unit string, p replay.Progress) string {
	const width = 20
	frac := 1.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
		if frac > 1 {
			frac = 1
		}
	}
	filled := int(frac * width)
	eta := "-"
	if p.ETA > 0 {
		eta = p.ETA.Round(time.Second).String()
	} else if p.Done >= p.Total {
		eta = "0s"
	}
	rate := "ev/s"
	if unit != "events" {
		rate = unit + "/s"
	}
	return fmt.Sprintf("%s [%s%s] %3d%%  %s/%s %s  %s %s  ETA %s", label,
		strings.Repeat("#", filled), strings.Repeat("-", width-filled), int(frac*100),
		thousands(p.Done), thousands(p.Total), unit, thousands(int64(p.Rate)), rate, eta)
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
