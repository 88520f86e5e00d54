package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// langchaingo's clients turn an HTTP failure into an error string and drop
// the response, so the status code and Retry-After header are gone by the
// time the error reaches us. Every provider takes an *http.Client, so each
// attempt carries a recorder in its context and the transport fills it in.

type recorderKey struct{}

// attemptRecord is what the transport saw during one attempt.
type attemptRecord struct {
	mu         sync.Mutex
	url        string // the endpoint, without credentials or query
	status     int
	retryAfter time.Duration
	netErr     error
	tooLarge   error // the response body went over the cap
	// logProbs, when set, asks the transport for token log-probabilities
	// (logprobs.go).
	logProbs *logProbsRequest
	// sent, when set, hears the endpoint as the request goes out, so that
	// a call that hangs can be named before it ends.
	sent func(endpoint string)
}

func withRecorder(ctx context.Context, r *attemptRecord) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

func (r *attemptRecord) get() (status int, retryAfter time.Duration, netErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter, r.netErr
}

func (r *attemptRecord) endpoint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url
}

// endpoint is u as errors may show it: scheme, host and path, without the
// user, password or query a URL can carry secrets in.
func endpoint(u *url.URL) string {
	if u == nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

func (r *attemptRecord) tooLargeErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tooLarge
}

// recordingTransport notes each response's status and Retry-After, and each
// transport error, in the recorder of the request's context. It caps each
// response body at maxBody bytes.
type recordingTransport struct {
	base    http.RoundTripper
	maxBody int64
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(recorderKey{}).(*attemptRecord)
	var lp *logProbsRequest
	if rec != nil {
		rec.mu.Lock()
		lp = rec.logProbs
		rec.url = endpoint(req.URL)
		sent := rec.sent
		rec.mu.Unlock()
		if sent != nil {
			sent(endpoint(req.URL))
		}
	}
	if lp != nil {
		var err error
		if req, err = addLogProbs(req, lp.top); err != nil {
			return nil, err
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.maxBody > 0 {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.maxBody, limit: t.maxBody, url: endpoint(req.URL), rec: rec}
	}
	if rec == nil {
		return resp, err
	}
	if err == nil && lp != nil {
		var tokens []TokenLogProb
		if tokens, err = readLogProbs(resp); err != nil {
			resp = nil
		}
		rec.mu.Lock()
		lp.tokens = tokens
		rec.mu.Unlock()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err != nil {
		rec.netErr = err
		return resp, err
	}
	rec.status = resp.StatusCode
	rec.retryAfter = parseRetryAfter(resp.Header, time.Now())
	return resp, nil
}

// newHTTPClient returns the client handed to langchaingo providers: pooled
// keep-alive connections sized for the concurrency limit, no client-wide
// timeout (each attempt has its own deadline), and the recorder.
func newHTTPClient(concurrency int, maxBody int64) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if concurrency < 16 {
		concurrency = 16
	}
	base.MaxIdleConns = 2 * concurrency
	base.MaxIdleConnsPerHost = 2 * concurrency
	return &http.Client{Transport: &recordingTransport{base: base, maxBody: maxBody}}
}

// errResponseTooLarge is a response body that went over the cap.
type errResponseTooLarge struct {
	url   string
	limit int64
}

func (e *errResponseTooLarge) Error() string {
	return fmt.Sprintf("the answer from %s is over the %s limit on a model's response", e.url, byteSize(e.limit))
}

// byteSize is n for people: "8 MiB", or bytes when not a whole MiB or KiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}

// cappedBody reads a response body up to limit bytes; past that every
// read fails, and the attempt's recorder hears why. Whatever the client
// makes of the failed read (a decode error, a stream that stopped), the
// call then fails as too large.
type cappedBody struct {
	io.ReadCloser
	left, limit int64
	url         string
	rec         *attemptRecord
	err         error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more than allowed tells a body at the cap from one over it
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n, b.left = int(b.left), 0
	b.err = &errResponseTooLarge{url: b.url, limit: b.limit}
	if b.rec != nil {
		b.rec.mu.Lock()
		b.rec.tooLarge = b.err
		b.rec.mu.Unlock()
	}
	return n, b.err
}

// parseRetryAfter reads Retry-After (seconds or an HTTP date) and OpenAI's
// retry-after-ms; zero when absent or unreadable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// failure is the verdict on one failed attempt.
type failure struct {
	retryable  bool
	status     int
	retryAfter time.Duration
	reason     string // short, for logs: "HTTP 429", "timeout", ...
	// detail, when set, says what happened better than the provider's
	// error text (which for network errors is a bare "failed to reach API
	// server"): the endpoint and the cause.
	detail string
}

// errStreamBroken marks a failed attempt that had already streamed part
// of its answer to the caller: it is not retried, since the caller has
// shown that part and a retry would show the answer twice.
type errStreamBroken struct{ err error }

func (e errStreamBroken) Error() string { return e.err.Error() }

var statusInText = regexp.MustCompile(`status code:? (\d{3})`)

// classify decides whether a failed attempt is worth retrying. ctx is the
// caller's context, attemptCtx the attempt's (with the per-call deadline
// timeout).
func classify(ctx, attemptCtx context.Context, err error, rec *attemptRecord, timeout time.Duration) failure {
	status, retryAfter, netErr := rec.get()
	url := rec.endpoint()
	switch {
	case ctx.Err() != nil:
		return failure{reason: "canceled"}
	case rec.tooLargeErr() != nil:
		// Asking again would bring the same flood.
		return failure{reason: "response too large", status: status, detail: rec.tooLargeErr().Error()}
	case errors.As(err, new(errStreamBroken)):
		return failure{reason: "answer stream broke after it began", status: status}
	case errors.Is(attemptCtx.Err(), context.DeadlineExceeded):
		f := failure{retryable: true, reason: "timeout", status: status}
		if url != "" {
			f.detail = fmt.Sprintf("no complete answer from %s within %s", url, timeout)
		}
		return f
	case status != 0 && status != http.StatusOK:
		return failure{retryable: retryableStatus(status), status: status, retryAfter: retryAfter,
			reason: "HTTP " + strconv.Itoa(status)}
	case netErr != nil:
		// Connection refused or reset, EOF mid-response: transient far more
		// often than not, and the retry budget bounds the cost. A name that
		// does not resolve will not resolve on the next try.
		var dns *net.DNSError
		permanent := errors.As(netErr, &dns) && dns.IsNotFound
		return failure{retryable: !permanent, reason: "network error",
			detail: fmt.Sprintf("cannot reach %s: %s", url, netCause(netErr))}
	case status == http.StatusOK:
		// The server answered but the client could not use the answer
		// (empty choices, malformed JSON): asking again rarely helps.
		return failure{reason: "unusable response", status: status,
			detail: fmt.Sprintf("the answer from %s could not be read: %v", url, err)}
	}
	// No recorder information: a model we did not build. Read what we can.
	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit, llms.ErrCodeProviderUnavailable, llms.ErrCodeTimeout:
			return failure{retryable: true, reason: string(le.Code)}
		}
	}
	if m := statusInText.FindStringSubmatch(err.Error()); m != nil {
		s, _ := strconv.Atoi(m[1])
		return failure{retryable: retryableStatus(s), status: s, reason: "HTTP " + m[1]}
	}
	if strings.Contains(strings.ToLower(err.Error()), "timeout") {
		return failure{retryable: true, reason: "timeout"}
	}
	return failure{reason: "error"}
}

// netCause names why a connection failed, in the words people search for.
func netCause(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is the server running, and on this port?)"
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "DNS: no such host " + dns.Name
		}
		return "DNS lookup of " + dns.Name + " failed: " + dns.Err
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out connecting"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

func retryableStatus(s int) bool {
	return s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500
}

// redactor removes secrets from text that may reach an error or a log.
type redactor struct {
	secrets []string
}

var tokenish = regexp.MustCompile(`(?i)(bearer\s+)[^\s"',]+|\b(sk|sk-ant|sk-proj)-[A-Za-z0-9_\-]{8,}`)

func (r redactor) redact(s string) string {
	for _, sec := range r.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	s = tokenish.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "bearer") {
			return "Bearer [REDACTED]"
		}
		return "[REDACTED]"
	})
	const maxLen = 400
	if len(s) > maxLen {
		s = strings.ToValidUTF8(s[:maxLen], "") + "..."
	}
	return s
}
