// Package progress shows long work on stderr: redrawn in place on a
// terminal, a plain line every few seconds otherwise, or nothing.
package progress

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Modes of --progress.
const (
	Auto  = "auto"
	Plain = "plain"
	None  = "none"
)

// PlainEvery is how often plain mode prints a status line: often enough to
// see a run is alive, rarely enough that an 8-hour log stays small.
const PlainEvery = 10 * time.Second

// Printer writes progress to one stream.
type Printer struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	none     bool
	lastLine time.Time
	inStatus bool
	log      io.Writer
	onPhase  func(line string)
}

// LogTo also writes every phase line, time-stamped, to log (the run's
// calibra.log), whatever the display mode.
func (p *Printer) LogTo(log io.Writer) {
	p.mu.Lock()
	p.log = log
	p.mu.Unlock()
}

// New returns a printer for mode on w; isTTY says whether w is a terminal.
func New(w io.Writer, mode string, isTTY bool) *Printer {
	return &Printer{w: w, tty: mode == Auto && isTTY, none: mode == None}
}

// OnPhase also hands every phase line to f (the run's live record in the
// results store), whatever the display mode.
func (p *Printer) OnPhase(f func(line string)) {
	p.mu.Lock()
	p.onPhase = f
	p.mu.Unlock()
}

// Phase prints a line that always matters: a step starting or ending.
func (p *Printer) Phase(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != nil {
		fmt.Fprintf(p.log, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
	if p.onPhase != nil {
		p.onPhase(fmt.Sprintf(format, args...))
	}
	if p.none {
		return
	}
	p.endStatus()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Status shows a live status line: redrawn on a terminal, printed every
// PlainEvery otherwise.
func (p *Printer) Status(line string) {
	if p.none {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.inStatus = true
		return
	}
	if now := time.Now(); now.Sub(p.lastLine) >= PlainEvery {
		p.lastLine = now
		fmt.Fprintln(p.w, line)
	}
}

// Done ends a redrawn status line.
func (p *Printer) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endStatus()
}

func (p *Printer) endStatus() {
	if p.inStatus {
		fmt.Fprintln(p.w)
		p.inStatus = false
	}
}

// Bar counts work done out of a known total.
type Bar interface {
	Add(n int64)
	// SetTotal replaces the total, as when an estimate gives way to the
	// exact figure at the end.
	SetTotal(total int64)
	Finish()
}

// Bar starts a progress bar over total units; unit names them in plain mode.
func (p *Printer) Bar(total int64, desc, unit string) Bar { return p.bar(total, desc, unit, false) }

// BytesBar starts a progress bar over total bytes (an estimate SetTotal
// may correct): it shows MB, MB/s and the time left at that rate.
func (p *Printer) BytesBar(total int64, desc string) Bar { return p.bar(total, desc, "MB", true) }

func (p *Printer) bar(total int64, desc, unit string, inBytes bool) Bar {
	switch {
	case p.none:
		return nopBar{}
	case p.tty:
		p.Done()
		bar := &ttyBar{b: progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionShowBytes(inBytes),
			progressbar.OptionSetItsString(unit),
			progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
			progressbar.OptionFullWidth())}
		bar.w = p.w
		bar.total.Store(total)
		return bar
	default:
		return &plainBar{p: p, total: total, desc: desc, unit: unit, bytes: inBytes, start: time.Now()}
	}
}

type nopBar struct{}

func (nopBar) Add(int64)      {}
func (nopBar) SetTotal(int64) {}
func (nopBar) Finish()        {}

type ttyBar struct {
	b           *progressbar.ProgressBar
	w           io.Writer
	done, total atomic.Int64
}

func (b *ttyBar) Add(n int64) { b.done.Add(n); _ = b.b.Add64(n) }

func (b *ttyBar) SetTotal(total int64) { b.total.Store(total); b.b.ChangeMax64(total) }

// Finish fills the bar only when the work is all done: an interrupted
// load stays at the share it reached, never "100%".
func (b *ttyBar) Finish() {
	if b.done.Load() >= b.total.Load() {
		_ = b.b.Finish()
		return
	}
	_ = b.b.Exit()
	fmt.Fprintln(b.w)
}

type plainBar struct {
	mu          sync.Mutex
	p           *Printer
	total, done int64
	desc, unit  string
	bytes       bool // counts bytes, shown in MB
	start       time.Time
}

func (b *plainBar) Add(n int64) {
	b.mu.Lock()
	b.done += n
	done := b.done
	b.mu.Unlock()
	b.p.Status(b.line(done))
}

func (b *plainBar) SetTotal(total int64) {
	b.mu.Lock()
	b.total = total
	b.mu.Unlock()
}

func (b *plainBar) Finish() {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	b.p.Phase("%s", b.line(done))
}

func (b *plainBar) line(done int64) string {
	b.mu.Lock()
	total := b.total
	b.mu.Unlock()
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	el := time.Since(b.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(done) / el
	}
	if !b.bytes {
		return fmt.Sprintf("%s: %.0f%% (%d/%d %s, %.0f %s/s)", b.desc, pct, done, total, b.unit, rate, b.unit)
	}
	line := fmt.Sprintf("%s: %.0f%% (%.0f/%.0f MB, %.1f MB/s", b.desc, pct, float64(done)/1e6, float64(total)/1e6, rate/1e6)
	if left := total - done; left > 0 && rate > 0 {
		if d := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second); d > 0 {
			line += ", about " + d.String() + " left"
		}
	}
	return line + ")"
}
