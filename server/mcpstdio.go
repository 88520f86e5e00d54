package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docgraph/docgraph/internal/termtext"
)

// The stdio transport of `query mcp` checks every line itself before the
// SDK sees it: go-sdk v1.8.0 (github.com/modelcontextprotocol/go-sdk/issues/1209) ends the session, with no
// reply, on the first line that is not a JSON-RPC 2.0 message, so one bad
// line from a client killed the session. Here a bad line gets a JSON-RPC
// error and the session reads on.

const (
	// MaxMCPLine bounds one message: tool arguments are a question and a
	// few options (a question is at most 8 KiB), so 1 MiB is room to spare,
	// and a longer line is discarded as it streams, never held whole.
	MaxMCPLine = 1 << 20
	// maxMCPDepth bounds nesting: the messages docgraph takes are a few
	// levels deep, and a deep one costs every decoder on its way.
	maxMCPDepth = 64
)

// lineTransport speaks newline-delimited JSON-RPC over in and out, the
// MCP stdio transport, refusing malformed lines one by one and the
// requests over maxInFlight.
type lineTransport struct {
	in          io.Reader
	out         io.Writer
	logger      *log.Logger
	maxInFlight int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, logger: t.logger, incoming: make(chan lineMsg), closed: make(chan struct{}),
		maxInFlight: t.maxInFlight, inFlight: map[jsonrpc.ID]bool{}}
	// Reads run in their own goroutine so that Close unblocks Read; a read
	// of stdin itself cannot be interrupted, so the goroutine ends at the
	// next line or at EOF.
	go c.readLoop(bufio.NewReaderSize(t.in, 64<<10))
	return c, nil
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	out    io.Writer
	logger *log.Logger

	writeMu sync.Mutex // the SDK writes concurrently, and refusals come from the read loop

	incoming  chan lineMsg
	closeOnce sync.Once
	closed    chan struct{}

	// The SDK runs every request in a goroutine of its own as soon as it
	// reads it (a tools/call is released to run beside the next request
	// before its handler starts), with no bound: 3,000 pipelined searches
	// ran at once. So the requests are counted here, before the SDK sees
	// them: one is in flight from its line until its response is written,
	// and a request over maxInFlight (0: no bound) is answered at once
	// by the read loop. That reply is written before the next line is read,
	// so a client that sends without reading its replies stops being read
	// too: what is held is at most maxInFlight requests, whatever it sends.
	inFlightMu  sync.Mutex
	inFlight    map[jsonrpc.ID]bool
	maxInFlight int
	refusing    bool // the last request read was refused as one too many (read loop only)
}

// busyCode is the JSON-RPC error of a request refused because the server
// has as many in flight as it takes: a server error, in the range
// JSON-RPC leaves to implementations (the HTTP transport's session limit
// answers with it too).
const busyCode = -32000

// admission is what becomes of a request read.
type admission int

const (
	admitted  admission = iota
	busy                // maxInFlight requests are in flight
	duplicate           // a request in flight has the same id
)

// admit counts the request id in flight unless it would be one too many
// or its id is taken (the SDK would answer a duplicate with no id, and a
// reply to the first would then free the second's count too).
func (c *lineConn) admit(id jsonrpc.ID) admission {
	c.inFlightMu.Lock()
	defer c.inFlightMu.Unlock()
	switch {
	case c.inFlight[id]:
		return duplicate
	case c.maxInFlight > 0 && len(c.inFlight) >= c.maxInFlight:
		return busy
	}
	c.inFlight[id] = true
	return admitted
}

// answered ends the request id's time in flight: the SDK writes its
// response once the handler has returned, so its work is over. It is
// called before the response is written, so that a client sending its
// next request as soon as it reads the reply finds the slot free.
func (c *lineConn) answered(id jsonrpc.ID) {
	c.inFlightMu.Lock()
	defer c.inFlightMu.Unlock()
	delete(c.inFlight, id)
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.answered(r.ID)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// deliver hands m to Read; false once the connection is closed.
func (c *lineConn) deliver(m lineMsg) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

// readLoop reads r a line at a time until it ends or the connection
// closes. Blank lines are skipped; a line over MaxMCPLine is drained
// without being kept.
func (c *lineConn) readLoop(r *bufio.Reader) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxMCPLine+len("\r\n") {
				tooLong, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		msg := bytes.Trim(line, " \t\r\n") // JSON's whitespace only
		if !tooLong && len(msg) > MaxMCPLine {
			tooLong = true
		}
		switch {
		case tooLong:
			err = firstErr(c.refuse(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: message over %d bytes", MaxMCPLine)), err)
		case len(msg) > 0:
			m, id, code, why := decodeLine(msg)
			if code == 0 {
				id, code, why = c.admission(m)
			}
			if code != 0 {
				err = firstErr(c.refuse(id, code, why), err)
			} else if !c.deliver(lineMsg{msg: m}) {
				return
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			c.deliver(lineMsg{err: err})
			return
		}
	}
}

// admission decides whether the SDK gets m: notifications and responses
// always (they get no reply, so they hold nothing here), a request when
// admit takes it. Otherwise code and why are the refusal, for the raw id.
func (c *lineConn) admission(m jsonrpc.Message) (id json.RawMessage, code int, why string) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil, 0, ""
	}
	switch c.admit(req.ID) {
	case busy:
		code, why = busyCode, fmt.Sprintf("server busy: %d requests in flight, the most it takes (--max-concurrent); send this one again once a reply comes", c.maxInFlight)
	case duplicate:
		code, why = jsonrpc.CodeInvalidRequest, "invalid request: the id of a request still in flight"
	default:
		c.refusing = false
		return nil, 0, ""
	}
	id, err := json.Marshal(req.ID.Raw())
	if err != nil {
		id = nil // null, as for a request whose id cannot be read
	}
	return id, code, why
}

// firstErr is the first error of a write and a read: a failed reply ends the
// session like a failed read.
func firstErr(write, read error) error {
	if write != nil {
		return write
	}
	return read
}

// refuse answers a malformed line with a JSON-RPC error; id is the raw
// request id, or nil where none could be read (then null, as JSON-RPC
// asks).
func (c *lineConn) refuse(id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	switch {
	case c.logger == nil:
	case code != busyCode:
		c.logger.Printf("refused a malformed message (%d): %s", code, termtext.Escape(message))
	case !c.refusing:
		// One line for a run of refusals, however many a client pipelines.
		c.logger.Printf("busy: refusing requests over --max-concurrent %d until one is answered", c.maxInFlight)
	}
	c.refusing = code == busyCode
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}})
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// decodeLine reads one line as a single JSON-RPC 2.0 message. When it is
// not one, code is -32700 (not JSON, or over the limits) or -32600 (JSON
// but no request or response), why says so, and id is the message's id
// where it has a usable one.
func decodeLine(line []byte) (msg jsonrpc.Message, id json.RawMessage, code int, why string) {
	if jsonDepth(line) > maxMCPDepth {
		return nil, nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: nested deeper than %d", maxMCPDepth)
	}
	var v json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported, send one message a line"
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object"
	}
	fields, dup := topFields(line)
	if raw := fields["id"]; dup != "id" && len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		id = raw
	}
	if dup != "" {
		return nil, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %q given twice", dup)
	}
	var version, method string
	switch {
	case json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0":
		return nil, id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	case fields["method"] != nil && json.Unmarshal(fields["method"], &method) != nil:
		return nil, id, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`
	case fields["id"] != nil && id == nil && string(fields["id"]) != "null":
		return nil, nil, jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or a number`
	case fields["method"] == nil && id == nil:
		return nil, nil, jsonrpc.CodeInvalidRequest, `invalid request: no "method", and no "id" of a response`
	}
	// The SDK has the last word; the checks above only make sure it does
	// not see what it would end the session on.
	msg, err := jsonrpc.DecodeMessage(bytes.Clone(line))
	if err != nil {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return msg, nil, 0, ""
}

// topFields are the raw values of a JSON object's members, by exact name
// (encoding/json would match "ID" to "id"; the SDK does not), and the
// first name given twice, on which decoders disagree.
func topFields(obj []byte) (fields map[string]json.RawMessage, dup string) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	fields = map[string]json.RawMessage{}
	if _, err := dec.Token(); err != nil { // {
		return fields, ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		if _, seen := fields[name]; seen && dup == "" {
			dup = name
		}
		fields[name] = raw
	}
	return fields, dup
}

// jsonDepth is how deep arrays and objects nest in data, outside strings.
// It runs before any decoder, so a deep line costs one pass.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// NewStdioTransport is MCP's stdio transport over in and out
// (newline-delimited JSON-RPC) that answers a malformed line with a
// JSON-RPC error and reads on, logging what it refused to logger. At most
// maxInFlight requests are worked on at once (0: no bound); one more is
// answered at once with a JSON-RPC error (code -32000, server busy).
func NewStdioTransport(in io.Reader, out io.Writer, logger *log.Logger, maxInFlight int) mcp.Transport {
	return &lineTransport{in: in, out: out, logger: logger, maxInFlight: maxInFlight}
}
