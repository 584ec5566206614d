package harness

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"text/template"
	"time"

	"gonum.org/v1/plot"
)

// render executes the README template with rep.
func (x Experiment[R]) render(rep Report[R]) ([]byte, error) {
	t, err := template.New(x.Name + "/readme.md.tmpl").Funcs(Funcs).Option("missingkey=error").Parse(x.Readme)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, rep); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Funcs are the README templates' formatting functions.
var Funcs = template.FuncMap{
	"pct":  func(x float64) string { return fmt.Sprintf("%.2f", 100*x) }, // a fraction as a percentage, 2 decimals
	"x100": func(x float64) float64 { return 100 * x },
	"div":  func(a, b float64) float64 { return a / b },
	"sub":  func(a, b int) int { return a - b },
	"mul":  func(a, b int) int { return a * b },
	"seq": func(n int) []int { // 1, 2, …, n
		s := make([]int, n)
		for i := range s {
			s[i] = i + 1
		}
		return s
	},
	"commas": Commas,
	"parts":  func() []string { return Parts },
	"mflop": func(f float64) string { // FLOPs as MFLOPs, three significant digits
		switch m := f / 1e6; {
		case m >= 100:
			return fmt.Sprintf("%.0f", m)
		case m >= 1:
			return fmt.Sprintf("%.3g", m)
		default:
			return fmt.Sprintf("%.2g", m)
		}
	},
}

// RoundWall prints a wall time to the second, or to 0.1 s under 10 s.
func RoundWall(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Commas groups an integer's digits by thousands.
func Commas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && ch != '-' && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// Decades is a log-axis ticker: every power of ten is marked, every third
// one labelled 1e±k.
type Decades struct{}

// Ticks implements plot.Ticker.
func (Decades) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		t := plot.Tick{Value: math.Pow(10, float64(e))}
		if e%3 == 0 {
			t.Label = fmt.Sprintf("1e%d", e)
		}
		ts = append(ts, t)
	}
	return ts
}
