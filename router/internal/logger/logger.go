// Package logger writes the router's records as pino does (NDJSON: level as pino's
// number, time in ms since the epoch, pid, hostname, msg), so the supervisor reads
// them off the router's stderr and logs them through its own pino instance as if the
// router were one of its components (src/supervisor/native-router.js).
package logger

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
)

// pino's level numbers (https://getpino.io/#/docs/api?id=loggerlevels).
const (
	Trace = 10
	Debug = 20
	Info  = 30
	Warn  = 40
	Error = 50
	Fatal = 60
)

// LevelTrace is slog's level for pino's trace.
const LevelTrace = slog.Level(-8)

// New returns a logger writing one JSON record per line to w, at level and above
// (pino's names: trace, debug, info, warn, error, fatal, silent).
func New(w io.Writer, level string) *slog.Logger {
	lv := new(slog.LevelVar)
	lv.Set(ParseLevel(level))
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv, ReplaceAttr: pinoAttr})
	host, _ := os.Hostname()
	return slog.New(h).With(slog.Int("pid", os.Getpid()), slog.String("hostname", host))
}

// Discard is a logger that writes nothing (tests).
func Discard() *slog.Logger { return slog.New(discard{}) }

// ParseLevel maps pino's level names to slog levels; silent is above every record.
func ParseLevel(name string) slog.Level {
	switch strings.ToLower(name) {
	case "trace":
		return LevelTrace
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	case "fatal":
		return slog.LevelError + 4
	case "silent":
		return slog.Level(1 << 20)
	}
	return slog.LevelInfo
}

// pinoLevel: slog's Debug -4, Info 0, Warn 4, Error 8 are pino's 20, 30, 40, 50.
func pinoLevel(l slog.Level) int64 { return 30 + int64(l)*10/4 }

func pinoAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Int64("time", a.Value.Time().UnixMilli())
	case slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.Int64("level", pinoLevel(l))
		}
	}
	if err, ok := a.Value.Any().(error); ok {
		return slog.String(a.Key, err.Error())
	}
	return a
}

type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }
