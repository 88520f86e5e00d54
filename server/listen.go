package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"
)

// ConnTimeouts bound how long one connection may hold the server without
// sending: its request headers, its whole request (body included), and an
// idle keep-alive between requests.
type ConnTimeouts struct {
	ReadHeader, Read, Idle time.Duration
}

// DefaultConnTimeouts: 30 s reads a 64 KiB query body at 2 KiB/s, far
// slower than any real client; a client slower still is cut off with a 408.
var DefaultConnTimeouts = ConnTimeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Idle: 2 * time.Minute}

// ServeOptions say how ListenAndServe runs.
type ServeOptions struct {
	// Addr is the address to listen on, HOST:PORT.
	Addr string
	// Path is the URL path the log line shows after the address ("/mcp").
	Path string
	// Guarded says a bearer token is required, for the log line.
	Guarded bool
	// Conn bounds each connection; zero fields take DefaultConnTimeouts.
	Conn ConnTimeouts
	// WriteTimeout bounds writing a response (0: none, for long-lived
	// MCP streams).
	WriteTimeout time.Duration
	// Shutdown is how long requests in flight may take to finish once
	// ctx ends.
	Shutdown time.Duration
	// Logger hears the server's lines (listening, shutting down, errors).
	Logger *log.Logger
	// Ready, when not nil, hears the address once the server listens.
	Ready func(addr string)
}

// Timeouts are the connection timeouts in force.
func (o ServeOptions) Timeouts() ConnTimeouts {
	t := o.Conn
	t.ReadHeader = cmp.Or(t.ReadHeader, DefaultConnTimeouts.ReadHeader)
	t.Read = cmp.Or(t.Read, DefaultConnTimeouts.Read)
	t.Idle = cmp.Or(t.Idle, DefaultConnTimeouts.Idle)
	return t
}

// ListenAndServe serves h on o.Addr until ctx ends, then lets requests in
// flight finish for up to o.Shutdown.
func ListenAndServe(ctx context.Context, h http.Handler, o ServeOptions) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	t := o.Timeouts()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          o.Logger,
	}
	auth := "no token (loopback only)"
	if o.Guarded {
		auth = "bearer token required"
	}
	o.Logger.Printf("listening on http://%s%s (%s)", ln.Addr(), o.Path, auth)
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	return serveUntil(ctx, srv, ln, o.Shutdown, o.Logger)
}

// serveUntil runs srv on ln until ctx ends, then lets requests in flight
// finish for up to grace.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, logger *log.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down: finishing requests in flight (up to %s)", grace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Printf("stopped")
	return nil
}

// IsLoopback says whether host names only this machine: a loopback
// address, or a name that resolves to loopback addresses alone.
func IsLoopback(host string) bool {
	if host == "" {
		return false // every interface
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}
