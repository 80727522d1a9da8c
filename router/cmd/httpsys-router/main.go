// Command httpsys-router is the native router (issue 25; docs/architecture.md 11): the
// supervisor spawns it with three pipes, sends commands as JSON lines on its stdin
// and reads answers and events on its stdout (docs/router-control.md); its records go
// to stderr as pino's NDJSON. The end of stdin is the supervisor gone, however it went:
// the router exits at once, so it never outlives it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"httpsys/router/internal/clock"
	"httpsys/router/internal/control"
	"httpsys/router/internal/hub"
	"httpsys/router/internal/logger"
)

func main() {
	level := flag.String("log-level", envOr("HTTPSYS_LOG_LEVEL", "info"), "trace, debug, info, warn, error, fatal or silent")
	profile := flag.String("cpuprofile", os.Getenv("HTTPSYS_ROUTER_CPUPROFILE"), "write a CPU profile (go tool pprof) to this file until the router exits")
	defaults := flag.Bool("defaults", false, "print the limits the router uses where start sets none, as JSON, and exit")
	spliceBodies := flag.Bool("splice", os.Getenv("HTTPSYS_ROUTER_SPLICE") == "1", "splice large response bodies from the workers' sockets to the clients' (Linux; off: on loopback it cost more CPU than the copies it saves, bench/results/router-profile.md)")
	flag.Parse()
	if *defaults {
		// one table of defaults: a test holds these to the config schema's (src/config/schema.js)
		b, _ := json.Marshal(hub.DefaultLimits())
		fmt.Println(string(b))
		return
	}
	defaultProcs()
	stopProfile := startProfile(*profile)
	// The router follows its supervisor, not the terminal or the service manager: a
	// Ctrl+C or a SIGTERM reaches the whole process group, and the supervisor answers it
	// by draining its apps through the router, then closing it (or its stdin closes)
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	log := logger.New(os.Stderr, *level).With("component", "router")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clock.New()
	go c.Run(ctx)

	ch := control.New(os.Stdout, log)
	h := hub.New(log, ch, c)
	h.SpliceBodies(*spliceBodies)
	var closed sync.Once
	finished := make(chan struct{})
	h.Register(ch, func() { closed.Do(func() { close(finished) }) })
	serveParent(h, log)

	// stdin ended: the supervisor is gone (or closed us): no orphan, even while a
	// command (a close waiting for responses) still runs
	go func() {
		_ = ch.Serve(os.Stdin, func(err error) {
			if err != nil {
				log.Error("control channel failed", "err", err)
			}
			select {
			case <-finished:
			default:
				h.Abandon()
				stopProfile()
				os.Exit(0)
			}
		})
	}()
	<-finished
	stopProfile()
}

func startProfile(file string) func() {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func init() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: httpsys-router [-log-level level] [-defaults]  (commands on stdin: docs/router-control.md)")
	}
}
