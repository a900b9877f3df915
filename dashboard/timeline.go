package dashboard

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// Timeline is GET /api/timeline: how many items fall due in each of the
// next Buckets steps of Step from From, per entity. Items already due and
// not yet applied (RabbitMQ's per-message TTL behind a live head, RB-7)
// count in the first step; locked and deferred items do not expire on
// their own (SB-7, SB-9, RB-6) and are left out.
type Timeline struct {
	From    time.Time        `json:"from"`
	Step    string           `json:"step"`
	Buckets int              `json:"buckets"`
	Series  []TimelineSeries `json:"series"`
	// Later counts the items due after the last step.
	Later int `json:"later"`

	step time.Duration
}

// TimelineSeries is one entity's upcoming expiries.
type TimelineSeries struct {
	Protocol string `json:"protocol"`
	Name     string `json:"name"`
	Counts   []int  `json:"counts"`
	Total    int    `json:"total"`
}

// The timeline's defaults and bounds.
const (
	defaultHorizon = time.Hour
	defaultBuckets = 60
	maxBuckets     = 500
)

func (s *Server) getTimeline(c *gin.Context) {
	t, err := s.timeline(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

// timeline reads ?horizon= (a Go or ISO 8601 duration, default 1h),
// ?buckets= (default 60) and ?protocol=.
func (s *Server) timeline(c *gin.Context) (*Timeline, error) {
	horizon := defaultHorizon
	if v := c.Query("horizon"); v != "" {
		d, err := core.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, core.Errorf(core.EINVALID, "horizon must be a positive duration like 10m, 24h or P14D, got %q", v)
		}
		horizon = d
	}
	buckets := uint64(defaultBuckets)
	if _, ok := c.GetQuery("buckets"); ok {
		var err error
		if buckets, err = queryUint(c, "buckets"); err != nil {
			return nil, err
		}
		if buckets == 0 || buckets > maxBuckets {
			return nil, core.Errorf(core.EINVALID, "buckets must be 1 to %d, got %d", maxBuckets, buckets)
		}
	}
	step := horizon / time.Duration(buckets)
	if step <= 0 {
		return nil, core.Errorf(core.EINVALID, "horizon %s is too short for %d buckets", horizon, buckets)
	}
	now := s.cfg.Clock.Now()
	t := &Timeline{From: now, Step: core.FormatDuration(step), Buckets: int(buckets), Series: []TimelineSeries{}, step: step}
	for _, in := range s.cfg.Engine.Entities(now, c.Query("protocol")) {
		if in.NextDue.IsZero() {
			continue // nothing pending in it (NextDue covers every item due time)
		}
		ser := TimelineSeries{Protocol: in.Protocol, Name: in.Name, Counts: make([]int, buckets)}
		err := s.cfg.Engine.Scan(now, in.EntityKey, 0, func(it *core.Item) bool {
			if it.DueAt.IsZero() || it.State == core.Locked || it.State == core.Deferred {
				return true
			}
			i := int64(0)
			if d := it.DueAt.Sub(now); d > 0 {
				i = int64((d - 1) / step)
			}
			if i >= int64(buckets) {
				t.Later++
				return true
			}
			ser.Counts[i]++
			ser.Total++
			return true
		})
		if err != nil {
			continue // deleted meanwhile
		}
		if ser.Total > 0 {
			t.Series = append(t.Series, ser)
		}
	}
	return t, nil
}

// timelinePage is the timeline with its plot laid out.
type timelinePage struct {
	*Timeline
	Horizon string
	Ranges  []string
	Plot    plot
}

// timelineRanges are the page's range buttons: horizon and buckets.
var timelineRanges = []struct{ name, horizon, buckets string }{
	{"10m", "10m", "60"}, {"1h", "1h", "60"}, {"1d", "24h", "48"}, {"14d", "P14D", "56"},
}

func (s *Server) timelineData(c *gin.Context) (any, error) {
	q := c.Request.URL.Query()
	name := q.Get("range")
	if name == "" {
		name = "1h"
	}
	for _, r := range timelineRanges {
		if r.name == name {
			q.Set("horizon", r.horizon)
			q.Set("buckets", r.buckets)
		}
	}
	c.Request.URL.RawQuery = q.Encode()
	t, err := s.timeline(c)
	if err != nil {
		return nil, err
	}
	p := &timelinePage{Timeline: t, Horizon: name}
	for _, r := range timelineRanges {
		p.Ranges = append(p.Ranges, r.name)
	}
	p.Plot = layoutPlot(t)
	return p, nil
}

// plot is a stacked bar chart laid out for SVG.
type plot struct {
	W, H int
	// Bars are the plot's rectangles, written as SVG here rather than by
	// the template: a plot has thousands, and the template escaping each
	// attribute of each was most of the page's time.
	Bars    template.HTML
	XTicks  []tick
	YTicks  []tick
	Legend  []legend
	X0, Y0  int // the origin of the axes
	XEnd    int
	Max     int
	Palette []string
}

type tick struct {
	X, Y  int
	Label string
}

type legend struct {
	Color, Protocol, Name string
	Total                 int
}

// palette colours the series, in order; it repeats past its end.
var palette = []string{"#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#dc2626", "#4b5563", "#65a30d"}

func layoutPlot(t *Timeline) plot {
	const w, h, left, right, top, bottom = 960, 280, 48, 12, 12, 36
	p := plot{W: w, H: h, X0: left, Y0: h - bottom, XEnd: w - right}
	totals := make([]int, t.Buckets)
	for _, s := range t.Series {
		for i, n := range s.Counts {
			totals[i] += n
		}
	}
	for _, n := range totals {
		p.Max = max(p.Max, n)
	}
	scale := max(p.Max, 1)
	plotW, plotH := w-left-right, h-top-bottom
	bw := plotW / t.Buckets
	gap := 1
	if bw < 3 {
		gap = 0
	}
	stack := make([]int, t.Buckets)
	var bars strings.Builder
	for si, s := range t.Series {
		color := palette[si%len(palette)]
		p.Legend = append(p.Legend, legend{Color: color, Protocol: s.Protocol, Name: s.Name, Total: s.Total})
		for i, n := range s.Counts {
			if n == 0 {
				continue
			}
			y0 := stack[i] * plotH / scale
			stack[i] += n
			y1 := stack[i] * plotH / scale
			from := t.From.Add(time.Duration(i) * t.step)
			title := fmt.Sprintf("%s: %d due between %s and %s", s.Name, n, from.UTC().Format("Jan 2 15:04:05"), from.Add(t.step).UTC().Format("15:04:05"))
			fmt.Fprintf(&bars, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>`,
				left+i*bw, h-bottom-y1, max(bw-gap, 1), max(y1-y0, 1), color, template.HTMLEscapeString(title))
		}
	}
	p.Bars = template.HTML(bars.String()) // numbers, a palette colour and escaped titles
	every := max(t.Buckets/6, 1)
	for i := 0; i <= t.Buckets; i += every {
		p.XTicks = append(p.XTicks, tick{X: left + i*bw, Y: h - bottom + 16, Label: "+" + core.FormatDuration(time.Duration(i)*t.step)})
	}
	for _, f := range []int{0, 1, 2} {
		v := p.Max * f / 2
		if f > 0 && v == 0 {
			continue
		}
		p.YTicks = append(p.YTicks, tick{X: left - 6, Y: h - bottom - v*plotH/scale, Label: fmt.Sprint(v)})
	}
	return p
}
