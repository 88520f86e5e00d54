package ann

import (
	"errors"
	"fmt"
	"iter"
	"slices"
)

// Draft is an index built in memory while its vectors arrive in steps (the
// groups of a bulk ingest), linked a step at a time on as few cores as the
// caller gives it, and written to its file once, by Writer.Install, when the
// steps end. A bulk ingest so builds most of its index on the core its one
// database writer leaves idle, instead of building all of it on every core
// after the writes, and writes the file once rather than once per step.
//
// Nothing reads a Draft: its nodes are searchable once installed. A Draft
// is not safe for concurrent use.
type Draft struct {
	o      Options
	rot    *rotator
	data   []byte // anonymous mapping holding the file's image
	v      *view
	byID   map[int64]uint32
	linked uint32 // nodes below this are in the graph
	rbuf   []float32
	code   []uint64
	g      *group // LinkUntil's searchers, kept for their buffers
}

// NewDraft starts an empty draft with o's parameters (o.Dim required).
func NewDraft(o Options) (*Draft, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if !supported {
		return nil, fmt.Errorf("ann: %w", errors.ErrUnsupported)
	}
	d := &Draft{o: o, rot: newRotator(o.Dim, o.Seed), byID: map[int64]uint32{}}
	d.rbuf = make([]float32, d.rot.pdim)
	d.code = make([]uint64, d.rot.pdim/64)
	if err := d.resize(1024, upperCapFor(1024, o.M)); err != nil {
		return nil, err
	}
	return d, nil
}

// resize moves the draft into a fresh image with room for capacity nodes
// and upperCap upper-layer slots.
func (d *Draft) resize(capacity, upperCap int) error {
	l := makeLayout(d.o.Dim, d.o.M, 2*d.o.M, d.o.EfConstruction, d.o.Seed, capacity, upperCap, d.o.Label)
	data, err := anonMap(l.size)
	if err != nil {
		return err
	}
	writeStatic(data, l)
	nv := newView(data, l)
	if old := d.v; old != nil {
		copyNodes(nv, old, int(old.h.Count), int(old.h.UpperUsed))
		unmapFile(d.data)
	}
	d.data, d.v = data, nv
	return nil
}

// Len is the number of live vectors in the draft.
func (d *Draft) Len() int { return len(d.byID) }

// Add adds the items, in order; an id already in the draft gets the new
// vector (its old node is marked deleted) unless the vector codes as
// before. The vectors are read during the call only. Nothing is linked
// until Link.
func (d *Draft) Add(items iter.Seq2[int64, []float32]) error {
	if d.v == nil {
		return ErrClosed
	}
	for id, vec := range items {
		if len(vec) != d.o.Dim {
			return fmt.Errorf("%w: item %d has %d dimensions, index %d", ErrMismatch, id, len(vec), d.o.Dim)
		}
		d.rot.rotate(d.rbuf, vec)
		scale := encode(d.code, d.rbuf)
		v := d.v
		if old, ok := d.byID[id]; ok {
			if v.scale[old] == scale && slices.Equal(v.code(old), d.code) {
				continue
			}
			d.tombstone(old)
		}
		lvl := levelFor(id, d.o.Seed, d.o.M)
		n, used := int(v.h.Count), int(v.h.UpperUsed)
		need := lvl * (d.o.M + 1)
		if n >= v.l.capacity || used+need > v.l.upperCap {
			capacity := 2 * v.l.capacity
			if err := d.resize(capacity, max(upperCapFor(capacity, d.o.M), 2*(used+need))); err != nil {
				return err
			}
			v = d.v
		}
		i := uint32(n)
		copy(v.code(i), d.code)
		v.scale[i], v.ids[i], v.info[i] = scale, id, uint32(lvl)
		if lvl > 0 {
			v.upOff[i] = uint32(used)
			v.h.UpperUsed = uint32(used + need)
		}
		v.h.Count = i + 1
		d.byID[id] = i
	}
	return nil
}

// Delete removes the ids from the draft; ids not in it are ignored.
func (d *Draft) Delete(ids ...int64) {
	if d.v == nil {
		return
	}
	for _, id := range ids {
		if i, ok := d.byID[id]; ok {
			d.tombstone(i)
		}
	}
}

func (d *Draft) tombstone(i uint32) {
	d.v.info[i] |= deletedBit
	d.v.h.Deleted++
	delete(d.byID, d.v.ids[i])
}

// Link puts the nodes added since the last Link into the graph, on at most
// workers goroutines (all cores when workers < 1).
func (d *Draft) Link(workers int) {
	if d.v == nil {
		return
	}
	n := d.v.h.Count
	linkNodes(d.v, d.linked, n, workers)
	d.linked = n
}

// LinkUntil links the nodes added since the last Link one at a time, on
// the calling goroutine, until they are all linked or stop (checked every
// few milliseconds' work) reports true; Link or Install link the rest.
func (d *Draft) LinkUntil(stop func() bool) {
	if d.v == nil {
		return
	}
	v := d.v
	n := v.h.Count
	b := newBulkBuilder(v)
	if d.g == nil {
		d.g = new(group)
	}
	for since := 64; d.linked < n; {
		if since >= 64 {
			if stop != nil && stop() {
				return
			}
			since = 0
		}
		hi := min(n, d.linked+groupSize)
		if d.linked < warmNodes {
			hi = d.linked + 1
		}
		since += int(hi - d.linked)
		d.g.insert(b, d.linked, hi, n)
		d.linked = hi
	}
}

// Close releases the draft's memory. Install closes the draft it installs.
func (d *Draft) Close() error {
	err := unmapFile(d.data)
	d.data, d.v, d.byID = nil, nil, nil
	return err
}

// Install links what d has not linked yet, on every core, and makes d the
// index file, recording gen as its generation; the file is renamed over
// the old one atomically, as Build does, and the draft is closed. A draft
// whose deleted nodes reach the share at which Apply compacts is compacted
// first.
func (w *Writer) Install(d *Draft, gen uint64) error {
	defer d.Close()
	if err := w.usable(); err != nil {
		return err
	}
	if d.v == nil {
		return ErrClosed
	}
	if d.o.Dim != w.opts.Dim {
		return fmt.Errorf("%w: draft has dimension %d, index %d", ErrMismatch, d.o.Dim, w.opts.Dim)
	}
	if d.o.Label != w.opts.Label {
		return fmt.Errorf("%w: draft is labelled %q, index %q", ErrForeign, d.o.Label, w.opts.Label)
	}
	d.Link(0)
	v := d.v
	n, del := v.h.Count, v.h.Deleted
	if del >= compactMin && float64(del) >= compactFraction*float64(n) {
		return w.rebuild(liveCodes(v), gen, 0, d.o)
	}
	// Room for a quarter more, as Build leaves, without the doubling's slack.
	if capacity := max(1024, int(n)+int(n)/4); capacity < v.l.capacity {
		used := int(v.h.UpperUsed)
		if err := d.resize(capacity, max(upperCapFor(capacity, d.o.M), used+used/4+64*(d.o.M+1))); err != nil {
			return err
		}
		v = d.v
	}
	v.h.Gen, v.h.Dirty = gen, 0
	tmp, err := writeNewFile(w.path, v)
	if err != nil {
		return err
	}
	return w.replace(tmp)
}
