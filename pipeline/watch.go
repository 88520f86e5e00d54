package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/docgraph/docgraph/loader"
)

// DefaultDebounce is how long a file must stay quiet before watch mode
// re-ingests it: long enough to fold an editor's save (temp file, rename,
// attribute changes) and a burst of writes into one re-ingest.
const DefaultDebounce = 2 * time.Second

// WatchOption configures Watch.
type WatchOption func(*watchConfig)

type watchConfig struct {
	debounce time.Duration
	// removalGrace is how much longer than a change a removal waits; zero
	// means half the debounce.
	removalGrace time.Duration
	stop         <-chan struct{}
	onChange     func(FileResult)
	onSynced     func(*Summary)
	onError      func(error)
}

// WithDebounce sets the per-file quiet period (default DefaultDebounce).
func WithDebounce(d time.Duration) WatchOption {
	return func(c *watchConfig) {
		if d > 0 {
			c.debounce = d
		}
	}
}

// WithStop makes Watch stop taking changes once stop is closed: files
// already being ingested finish (under Watch's ctx), queued ones are left
// pending in the store for the next start, and Watch returns nil.
func WithStop(stop <-chan struct{}) WatchOption {
	return func(c *watchConfig) { c.stop = stop }
}

// WithOnChange hears what was done about each changed path, one call per
// document, including files found unchanged. Calls come from one goroutine
// at a time per path but may be concurrent across paths.
func WithOnChange(fn func(FileResult)) WatchOption {
	return func(c *watchConfig) { c.onChange = fn }
}

// WithOnSynced hears the summary of the initial sync; when it is called the
// folders are being watched.
func WithOnSynced(fn func(*Summary)) WatchOption {
	return func(c *watchConfig) { c.onSynced = fn }
}

// WithOnError hears problems that do not stop watching, such as a file
// watch that could not be added or an event queue overflow (which triggers a
// full re-sync).
func WithOnError(fn func(error)) WatchOption {
	return func(c *watchConfig) { c.onError = fn }
}

// Watch keeps the store in step with the folders in roots. It first syncs
// them as a batch Ingest with Prune would (resuming documents a crash left
// unfinished, and removing documents of files now ignored), then follows
// file system events over the whole tree, new subfolders included. Each
// path is debounced; created and changed files are (re)ingested, removed and
// moved-out files lose their documents, and a file renamed within the tree
// keeps its graph. Hidden files, editor scratch files and paths excluded by
// .docgraphignore files are left alone (see Ignore).
//
// Watch returns nil once the stop channel (WithStop) is closed and in-flight
// documents are done, or ctx's error when ctx is cancelled; in-flight
// documents are then rolled back, never half-written.
func (p *Pipeline) Watch(ctx context.Context, roots []string, opts ...WatchOption) error {
	cfg := watchConfig{debounce: DefaultDebounce}
	for _, o := range opts {
		o(&cfg)
	}
	abs := make([]string, 0, len(roots))
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return fmt.Errorf("watch %s: %w", r, err)
		}
		info, err := os.Stat(a)
		if err != nil {
			return fmt.Errorf("watch %s: %w", r, err)
		}
		if !info.IsDir() {
			return fmt.Errorf("watch %s: not a folder", r)
		}
		if fs := loader.PseudoFS(a); fs != "" {
			return fmt.Errorf("watch %s: %s", r, loader.PseudoFSReason(fs))
		}
		abs = append(abs, a)
	}
	if len(abs) == 0 {
		return errors.New("watch: no folders given")
	}
	ig, err := NewIgnore(abs)
	if err != nil && cfg.onError != nil {
		cfg.onError(fmt.Errorf("watch: %w", err)) // those folders are left out; the rest is watched
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer fsw.Close()

	w := &watcher{
		p: p, cfg: cfg, roots: abs, ig: ig, fsw: fsw,
		scope: newScope(abs, p.FollowOutsideLinks),
		dirs:  map[string]bool{},
		queue: map[string]pending{},
		wake:  make(chan struct{}, 1),
	}
	// Watch before syncing so that nothing changed during the sync is missed.
	for _, r := range abs {
		if _, err := w.addTree(r); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	collectCtx, stopCollect := context.WithCancel(ctx)
	defer stopCollect()
	go w.collect(collectCtx)

	sum, err := w.sync(ctx, p.Progress)
	if err != nil {
		return err
	}
	if w.stopped() {
		return nil
	}
	if cfg.onSynced != nil {
		cfg.onSynced(sum)
	}
	return w.loop(ctx)
}

// watcher is the state of one Watch call.
type watcher struct {
	p     *Pipeline
	cfg   watchConfig
	roots []string
	ig    *Ignore
	fsw   *fsnotify.Watcher
	// scope judges links as a batch run over the roots would (Walk).
	scope *scope

	mu    sync.Mutex
	dirs  map[string]bool    // folders with a watch
	queue map[string]pending // path -> its queued change
	// unsupported holds new files of a type no loader reads, reported once
	// each (an editor saving one sends many events).
	unsupported map[string]bool
	wake        chan struct{}
}

// pending is a queued change of one path.
type pending struct {
	due time.Time
	dir bool // the path was a watched folder that is gone: its files went with it
}

// resyncKey is the queue entry that stands for a full re-sync.
const resyncKey = "\x00resync"

func (w *watcher) stopped() bool { return stopped(w.cfg.stop) }

func (w *watcher) report(r FileResult) {
	if w.cfg.onChange != nil {
		w.cfg.onChange(r)
	}
}

func (w *watcher) warn(err error) {
	if w.cfg.onError != nil {
		w.cfg.onError(err)
	}
}

// addTree watches dir and every folder under it that is not ignored, and
// returns the supported files found there.
func (w *watcher) addTree(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished or unreadable while walking: its own event will say
		}
		if d.IsDir() {
			if w.ig.Skip(p, true) || loader.PseudoFS(p) != "" {
				return fs.SkipDir
			}
			if err := w.fsw.Add(p); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir
				}
				if errors.Is(err, syscall.ENOSPC) {
					return fmt.Errorf("watch %s: %w (the per-user limit of watched folders is reached; raise fs.inotify.max_user_watches)", p, err)
				}
				return fmt.Errorf("watch %s: %w", p, err)
			}
			w.mu.Lock()
			w.dirs[p] = true
			w.mu.Unlock()
			return nil
		}
		if d.Type().IsRegular() && loader.Readable(p) && !w.ig.Skip(p, false) ||
			d.Type()&fs.ModeSymlink != 0 && w.linkedFile(p) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// linkedFile reports whether the symbolic link at path is taken as a
// document, as Walk takes it: it leads to a readable regular file that
// stays in the scope, off any pseudo file system, and is not ignored.
func (w *watcher) linkedFile(path string) bool {
	if w.ig.Skip(path, false) || w.scope.leadsOut(path) || loader.PseudoFS(path) != "" {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && loader.Readable(path)
}

// sync brings the store up to date with the folders as they are now.
func (w *watcher) sync(ctx context.Context, prog Progress) (*Summary, error) {
	var files []string
	for _, r := range w.roots {
		f, err := w.addTree(r)
		if err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
		files = append(files, f...)
	}
	w.p.owner() // the copy runs under the same lease owner
	q := *w.p
	q.Progress = prog
	sum, err := q.Ingest(ctx, files, Options{Prune: true, Stop: w.cfg.stop, within: w.scope})
	if err != nil {
		return sum, err
	}
	// Documents of files an ignore rule now excludes, and of paths now
	// links leading out of the folders, leave the graph.
	docs, err := w.p.Store.Documents(ctx)
	if err != nil {
		return sum, fmt.Errorf("watch: list documents: %w", err)
	}
	for _, d := range docs {
		if !localPath(d) || w.ig.rootOf(d.Path) == "" || w.stopped() {
			continue
		}
		if !w.ig.Skip(d.Path, false) && !w.scope.leadsOut(d.Path) {
			continue
		}
		r, err := w.p.DeleteDocument(ctx, d)
		if err != nil {
			return sum, fmt.Errorf("watch: %w", err)
		}
		sum.Deleted++
		if prog != nil {
			prog.File(r)
		}
	}
	return sum, nil
}

// collect turns file system events into due times in the queue.
func (w *watcher) collect(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.event(ctx, ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.enqueue(resyncKey, 0, false)
			}
			w.warn(fmt.Errorf("watch: %w", err))
		}
	}
}

func (w *watcher) event(ctx context.Context, ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // attributes only (touch, chmod): the content is what matters
	}
	name := filepath.Clean(ev.Name)
	if filepath.Base(name) == IgnoreFile {
		w.enqueue(resyncKey, w.cfg.debounce, false)
		return
	}
	info, err := os.Lstat(name)
	switch {
	case err == nil && info.IsDir():
		if !ev.Has(fsnotify.Create) {
			return
		}
		// A new or moved-in folder: watch it and take what is already inside,
		// since files written before the watch existed sent no events.
		files, err := w.addTree(name)
		if err != nil {
			w.warn(err)
		}
		for _, f := range files {
			w.markPending(ctx, f)
			w.enqueue(f, w.cfg.debounce, false)
		}
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		if w.ig.Skip(name, false) {
			return
		}
		// Where it leads is judged once it is due (process), as Walk
		// judges it: it may be made before its target, or retargeted.
		w.enqueue(name, w.cfg.debounce, false)
	case err == nil:
		if !info.Mode().IsRegular() || w.ig.Skip(name, false) {
			return
		}
		if !loader.Supported(name) {
			// Its content decides (loader.Readable), once it has been
			// written: judged in process, after the debounce, so a DOCX
			// still being copied is not called unsupported.
			w.enqueue(name, w.cfg.debounce, false)
			return
		}
		w.markPending(ctx, name)
		w.enqueue(name, w.cfg.debounce, false)
	case errors.Is(err, fs.ErrNotExist):
		w.mu.Lock()
		wasDir := w.dirs[name]
		if wasDir {
			// Watches under a moved folder follow it and would report stale
			// paths; the folder's new name, if in the tree, is added afresh.
			prefix := name + string(filepath.Separator)
			for d := range w.dirs {
				if d == name || strings.HasPrefix(d, prefix) {
					delete(w.dirs, d)
					_ = w.fsw.Remove(d)
				}
			}
		}
		w.mu.Unlock()
		// A removed file with an unknown name may have been a document read
		// by its content: DeletePath finds out from the store. A folder's
		// removal is often reported twice (by it and by its parent); the
		// second report must not turn the queued folder removal into a file's.
		if !wasDir && (w.ig.Skip(name, false) || !loader.Supported(name) && w.queuedDir(name)) {
			return
		}
		// Removals wait a little longer than changes, so that when a file is
		// renamed within the tree its new name is ingested first and keeps the
		// graph (by content id) instead of being extracted again.
		grace := w.cfg.removalGrace
		if grace <= 0 {
			grace = w.cfg.debounce / 2
		}
		w.enqueue(name, w.cfg.debounce+grace, wasDir)
	default:
		w.warn(fmt.Errorf("watch %s: %w", name, err))
	}
}

// reportUnsupported tells once per path that a file in the tree is of a
// type docgraph does not read (or a link leading out of the folders: why
// says which), so a new notes.xlsx is not silently ignored.
func (w *watcher) reportUnsupported(name, why string) {
	w.mu.Lock()
	if w.unsupported == nil {
		w.unsupported = map[string]bool{}
	}
	seen := w.unsupported[name]
	w.unsupported[name] = true
	w.mu.Unlock()
	if !seen {
		w.report(FileResult{Path: name, Outcome: Unsupported, Error: why})
	}
}

// markPending records a queued change for a path not yet stored, so a
// crash or shutdown before it is processed is resumed on the next start.
func (w *watcher) markPending(ctx context.Context, path string) {
	w.mu.Lock()
	_, queued := w.queue[path]
	w.mu.Unlock()
	if queued {
		return
	}
	if err := w.p.MarkPending(ctx, path); err != nil && ctx.Err() == nil {
		w.warn(err)
	}
}

// queuedDir reports whether path waits in the queue as a removed folder.
func (w *watcher) queuedDir(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queue[path].dir
}

func (w *watcher) enqueue(path string, after time.Duration, dir bool) {
	w.mu.Lock()
	w.queue[path] = pending{due: time.Now().Add(after), dir: dir}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// due takes the entries that are due, sorted by path.
func (w *watcher) due(now time.Time) (batch map[string]pending, resync bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	batch = map[string]pending{}
	for p, q := range w.queue {
		if q.due.After(now) {
			continue
		}
		delete(w.queue, p)
		if p == resyncKey {
			resync = true
		} else {
			batch[p] = q
		}
	}
	return batch, resync
}

// next says how long until the next entry is due, or an hour when none is.
func (w *watcher) next(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := time.Hour
	for _, q := range w.queue {
		next = min(next, max(q.due.Sub(now), 0))
	}
	return next
}

// loop processes due changes until stop or cancellation.
func (w *watcher) loop(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-w.cfg.stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
		case <-timer.C:
		}
		if w.stopped() {
			return nil
		}
		batch, resync := w.due(time.Now())
		if resync {
			if err := w.ig.Reload(); err != nil {
				w.warn(err)
			}
			if _, err := w.sync(ctx, changeProgress(w.report)); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				w.warn(err)
			}
		}
		if len(batch) > 0 {
			if err := w.process(ctx, batch); err != nil {
				return err
			}
		}
		timer.Reset(w.next(time.Now()))
	}
}

// process handles one batch of due paths: files that exist are ingested
// (concurrently), then paths that are gone lose their documents, so a
// rename's new name is seen before its old one is dropped.
func (w *watcher) process(ctx context.Context, batch map[string]pending) error {
	paths := make([]string, 0, len(batch))
	for p := range batch {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var present, gone []string
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			if w.scope.leadsOut(p) {
				w.reportUnsupported(p, linkOutside)
				// Never read; what it was read as before goes.
				gone = append(gone, p)
				continue
			}
			if !loader.Supported(p) && !batch[p].dir {
				if !loader.Readable(p) {
					w.reportUnsupported(p, unsupportedReason(p))
					// What it was read as before, if anything, goes.
					gone = append(gone, p)
					continue
				}
				w.markPending(ctx, p)
			}
			present = append(present, p)
		} else if !fileExists(p) {
			gone = append(gone, p)
		}
	}
	// Files left unstarted by a stop stay pending in the store: resumed on
	// the next start.
	if _, _, err := w.p.ingestFiles(ctx, present, w.cfg.stop, w.report); err != nil {
		return err
	}
	for _, path := range gone {
		if w.stopped() {
			break
		}
		results, err := w.p.DeletePath(ctx, path, batch[path].dir)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.warn(err)
		}
		for _, r := range results {
			w.report(r)
		}
	}
	return ctx.Err()
}

// changeProgress adapts a change callback to Progress for re-syncs.
type changeProgress func(FileResult)

func (c changeProgress) Start(int)         {}
func (c changeProgress) File(r FileResult) { c(r) }
