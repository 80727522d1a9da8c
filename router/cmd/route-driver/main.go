// Command route-driver runs the router's URL space (router/internal/route) for
// test/unit/router/route-differential.test.js, which compares it with src/urlprefix.js
// and with the request-target rules it restates. It reads one JSON object per line on
// stdin and writes
// one line per input. Text the JS holds as bytes (targets, Host values, addresses) and
// prefixes travel as base64: a prefix as UTF-8, with 0xff where the JS string holds a
// lone surrogate.
//
//	{"op": "parse", "input": b64, "allowPortZero": b}
//	  -> {"ok": true, "prefix": {prefix, scheme, host, hostKind, port, path, ip|null}} | {"ok": false, "reason": s}
//	{"op": "target", "raw": b64}
//	  -> {"canonical": {"ok", "path", "host": b64|null}, "app": {"ok", "url": b64, "host": b64}, "invalidUrl": b}
//	{"op": "host", "host": b64} -> {"hostname": b64, "validPort": b}
//	{"op": "addr", "addr": b64} -> {"key": s}
//	{"op": "table", "ops": [{"add": b64, "target": n} | {"remove": b64}],
//	 "routes": [{"scheme": s|null, "port": n, "host": b64|null, "localAddress": b64|null, "path": b64}]}
//	  -> {"ops": [{"ok": true} | {"code": s, "reason": s} | {"code": s, "owner": n} | {"removed": b}],
//	      "routes": [{"target": n, "prefix": s} | {"status": n}], "size": n, "ports": [n]}
package main

import (
	"errors"
	"fmt"
	"os"

	"httpsys/router/internal/jsonlines"
	"httpsys/router/internal/route"
)

type job struct {
	Op            string    `json:"op"`
	Input         []byte    `json:"input"`
	AllowPortZero bool      `json:"allowPortZero"`
	Raw           []byte    `json:"raw"`
	Host          []byte    `json:"host"`
	Addr          []byte    `json:"addr"`
	Ops           []tableOp `json:"ops"`
	Routes        []request `json:"routes"`
}

type tableOp struct {
	Add    []byte `json:"add"`
	Target int    `json:"target"`
	Remove []byte `json:"remove"`
}

type request struct {
	Scheme       *string `json:"scheme"`
	Port         int     `json:"port"`
	Host         []byte  `json:"host"`
	LocalAddress []byte  `json:"localAddress"`
	Path         []byte  `json:"path"`
}

type prefix struct {
	Prefix   string  `json:"prefix"`
	Scheme   string  `json:"scheme"`
	Host     string  `json:"host"`
	HostKind string  `json:"hostKind"`
	Port     int     `json:"port"`
	Path     string  `json:"path"`
	IP       *string `json:"ip"`
}

func main() {
	if err := jsonlines.Serve(os.Stdin, os.Stdout, runJob); err != nil {
		fmt.Fprintln(os.Stderr, "route-driver:", err)
		os.Exit(1)
	}
}

func runJob(j *job) (any, error) {
	switch j.Op {
	case "parse":
		p, err := route.Parse(string(j.Input), j.AllowPortZero)
		if err != nil {
			return map[string]any{"ok": false, "reason": reasonOf(err)}, nil
		}
		return map[string]any{"ok": true, "prefix": prefixOf(p)}, nil
	case "target":
		raw := string(j.Raw)
		c, ok := route.CanonicalTarget(raw)
		canonical := map[string]any{"ok": ok}
		if ok {
			canonical["path"] = c.Path
			canonical["host"] = nil
			if c.Absolute {
				canonical["host"] = []byte(c.Host)
			}
		}
		url, host, ok := route.CanonicalizeTarget(raw)
		app := map[string]any{"ok": ok}
		if ok {
			app["url"], app["host"] = []byte(url), []byte(host)
		}
		return map[string]any{"canonical": canonical, "app": app, "invalidUrl": route.IsInvalidUrl(raw)}, nil
	case "host":
		return map[string]any{"hostname": []byte(route.HostnameOf(string(j.Host))), "validPort": route.IsValidHostPort(string(j.Host))}, nil
	case "addr":
		return map[string]any{"key": route.AddressKey(string(j.Addr))}, nil
	case "table":
		return runTable(j), nil
	}
	return nil, fmt.Errorf("unknown op %q", j.Op)
}

func runTable(j *job) map[string]any {
	var t route.Table
	ops := make([]map[string]any, 0, len(j.Ops))
	for _, op := range j.Ops {
		if op.Remove != nil {
			ops = append(ops, map[string]any{"removed": t.Remove(route.Prefix{Prefix: string(op.Remove)})})
			continue
		}
		err := t.Add(route.Prefix{Prefix: string(op.Add)}, op.Target)
		var conflict *route.ConflictError
		switch {
		case err == nil:
			ops = append(ops, map[string]any{"ok": true})
		case errors.As(err, &conflict):
			ops = append(ops, map[string]any{"code": route.ConflictCode, "owner": conflict.Owner, "prefix": conflict.Prefix})
		default:
			ops = append(ops, map[string]any{"code": route.Code, "reason": reasonOf(err)})
		}
	}
	routes := make([]map[string]any, 0, len(j.Routes))
	for _, r := range j.Routes {
		a := route.Args{Port: r.Port, Host: string(r.Host), LocalAddress: string(r.LocalAddress), Path: string(r.Path)}
		if r.Scheme != nil {
			a.Scheme = *r.Scheme
		}
		res := t.Route(a)
		if res.Target != nil {
			routes = append(routes, map[string]any{"target": res.Target, "prefix": res.Prefix})
		} else {
			routes = append(routes, map[string]any{"status": res.Status})
		}
	}
	ports := t.Ports()
	if ports == nil {
		ports = []int{}
	}
	return map[string]any{"ops": ops, "routes": routes, "size": t.Len(), "ports": ports}
}

func reasonOf(err error) string {
	var e *route.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return err.Error()
}

func prefixOf(p route.Prefix) prefix {
	out := prefix{Prefix: p.Prefix, Scheme: p.Scheme, Host: p.Host, HostKind: string(p.HostKind), Port: p.Port, Path: p.Path}
	if p.IP != "" {
		out.IP = &p.IP
	}
	return out
}
