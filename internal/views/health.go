package views

import (
	"time"
)

// HealthThresholds colour the queues screen and name each queue's state.
// They come from the config file's health section; a zero field keeps the
// default.
type HealthThresholds struct {
	RateWarn  float64       `yaml:"rate_warn"` // ingress msg/s
	RateCrit  float64       `yaml:"rate_crit"`
	AgeWarn   time.Duration `yaml:"age_warn"` // age of the oldest message
	AgeCrit   time.Duration `yaml:"age_crit"`
	DepthWarn int           `yaml:"depth_warn"`
	DepthCrit int           `yaml:"depth_crit"`
}

// DefaultHealth is a parking queue nobody should ignore: any steady
// inflow (one dead letter every 10 s), an hour-old message or a thousand
// waiting.
func DefaultHealth() HealthThresholds {
	return HealthThresholds{RateWarn: 0.1, RateCrit: 10, AgeWarn: 10 * time.Minute, AgeCrit: time.Hour,
		DepthWarn: 100, DepthCrit: 1000}
}

// WithDefaults fills the zero fields from DefaultHealth.
func (h HealthThresholds) WithDefaults() HealthThresholds {
	d := DefaultHealth()
	h.RateWarn, h.RateCrit = orDefault(h.RateWarn, d.RateWarn), orDefault(h.RateCrit, d.RateCrit)
	h.AgeWarn, h.AgeCrit = orDefault(h.AgeWarn, d.AgeWarn), orDefault(h.AgeCrit, d.AgeCrit)
	h.DepthWarn, h.DepthCrit = orDefault(h.DepthWarn, d.DepthWarn), orDefault(h.DepthCrit, d.DepthCrit)
	return h
}

// orDefault is v, or d when v is zero.
func orDefault[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// Health is a queue's state as a word, so it reads without colour.
type Health string

const (
	HealthOK   Health = "ok"
	HealthWarn Health = "WARN"
	HealthCrit Health = "CRIT"
)

// Status is the worst of the queue's ingress, oldest message and depth
// against the thresholds; age is zero when unknown.
func (h HealthThresholds) Status(ingress float64, age time.Duration, depth int) Health {
	switch {
	case ingress >= h.RateCrit, age >= h.AgeCrit && age > 0, depth >= h.DepthCrit:
		return HealthCrit
	case ingress >= h.RateWarn, age >= h.AgeWarn && age > 0, depth >= h.DepthWarn:
		return HealthWarn
	}
	return HealthOK
}

// Trend is what the root measured of one queue across polls: its ingress
// now and the ingress of each poll, oldest first; when the depth last grew,
// and by how much over the last GrowthSpan (or since the first poll, when
// that is shorter: GrowthOver says which).
type Trend struct {
	Ingress     float64
	History     []float64
	LastArrival time.Time // zero: no growth seen
	Growth      int
	GrowthOver  time.Duration
	Baseline    int // the lowest depth of the span: a raised state falls back there
}

// GrowthSpan is the span the queues screen states a queue's growth over.
const GrowthSpan = 5 * time.Minute

// worse reports whether a is a more urgent state than b.
func worse(a, b Health) bool { return healthRank(a) > healthRank(b) }

func healthRank(h Health) int {
	switch h {
	case HealthCrit:
		return 2
	case HealthWarn:
		return 1
	}
	return 0
}

// trendCell is how many polls one sparkline cell averages, so a narrow
// column still spans minutes.
const trendCell = 3

// trendLine draws the history in width cells, each the mean of trendCell
// polls, the latest cell on the right.
func trendLine(history []float64, width int) string {
	var cells []float64
	for end := len(history); end > 0 && len(cells) < width; end -= trendCell {
		start := max(end-trendCell, 0)
		sum := 0.0
		for _, v := range history[start:end] {
			sum += v
		}
		cells = append([]float64{sum / float64(end-start)}, cells...)
	}
	line := Sparkline(cells, width)
	return line
}
