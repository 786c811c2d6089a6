package inflight

import (
	"container/list"
	"strings"
)

// Fair order of a Provider's waiters: round-robin over the namespaces
// waiting, round-robin over the kinds waiting within each namespace, first
// in first out within a namespace and kind. A namespace (or a kind within
// its namespace) that starts waiting takes the last turn of the round under
// way: one admission for each namespace already waiting goes before its
// first, however many each of them queued, and one that is served, empties
// and queues again cannot jump ahead of the others.

// entry is a waiter in its Provider's queue: in its namespace and kind's
// line (line, elem) until room is held for it, then in the Provider's
// held list (held, elem).
type entry struct {
	Waiter
	provider        string
	namespace, kind string
	held            bool
	elem            *list.Element
}

// newEntry is w queued for provider; its Key names its namespace and kind.
func newEntry(provider string, w Waiter) *entry {
	kind, rest, _ := strings.Cut(w.Key, "/")
	namespace, _, _ := strings.Cut(rest, "/")
	return &entry{Waiter: w, provider: provider, namespace: namespace, kind: kind}
}

// rotation is a round of turns over lines, O(1) in each step: next is
// whose turn it is.
type rotation struct {
	lines list.List
	next  *list.Element
}

// join adds v, last in the round under way (just before next's turn).
func (r *rotation) join(v any) *list.Element {
	if r.next == nil {
		r.next = r.lines.PushBack(v)
		return r.next
	}
	return r.lines.InsertBefore(v, r.next)
}

// leave takes e out; if it was its turn, the turn passes on.
func (r *rotation) leave(e *list.Element) {
	if r.next == e {
		r.pass()
		if r.next == e {
			r.next = nil
		}
	}
	r.lines.Remove(e)
}

// pass gives the turn to the next line, round again after the last.
func (r *rotation) pass() {
	if r.next = r.next.Next(); r.next == nil {
		r.next = r.lines.Front()
	}
}

// fairQueue is the waiters of one Provider that have no room held, in
// their fair order.
type fairQueue struct {
	namespaces rotation
	byName     map[string]*namespaceLine
	n          int
}

type namespaceLine struct {
	name   string
	kinds  rotation
	byKind map[string]*kindLine
	place  *list.Element // in fairQueue.namespaces
}

type kindLine struct {
	kind    string
	waiters list.List     // of *entry, first in first
	place   *list.Element // in namespaceLine.kinds
}

func (f *fairQueue) len() int { return f.n }

// push queues e last of its namespace and kind.
func (f *fairQueue) push(e *entry) {
	if f.byName == nil {
		f.byName = map[string]*namespaceLine{}
	}
	ns := f.byName[e.namespace]
	if ns == nil {
		ns = &namespaceLine{name: e.namespace, byKind: map[string]*kindLine{}}
		ns.place = f.namespaces.join(ns)
		f.byName[e.namespace] = ns
	}
	k := ns.byKind[e.kind]
	if k == nil {
		k = &kindLine{kind: e.kind}
		k.place = ns.kinds.join(k)
		ns.byKind[e.kind] = k
	}
	e.elem = k.waiters.PushBack(e)
	f.n++
}

// remove takes e out of the queue; a line left empty leaves its rotation.
func (f *fairQueue) remove(e *entry) {
	ns := f.byName[e.namespace]
	k := ns.byKind[e.kind]
	k.waiters.Remove(e.elem)
	e.elem = nil
	f.n--
	if k.waiters.Len() > 0 {
		return
	}
	ns.kinds.leave(k.place)
	delete(ns.byKind, e.kind)
	if len(ns.byKind) > 0 {
		return
	}
	f.namespaces.leave(ns.place)
	delete(f.byName, e.namespace)
}

// peek is the waiter whose turn it is, nil when none waits.
func (f *fairQueue) peek() *entry {
	if f.n == 0 {
		return nil
	}
	ns := f.namespaces.next.Value.(*namespaceLine)
	return ns.kinds.next.Value.(*kindLine).waiters.Front().Value.(*entry)
}

// pop takes the waiter whose turn it is out, and passes the turn on: in
// its namespace to the next kind, and to the next namespace.
func (f *fairQueue) pop() *entry {
	e := f.peek()
	if e == nil {
		return nil
	}
	ns := f.byName[e.namespace]
	kindStays := ns.byKind[e.kind].waiters.Len() > 1
	nsStays := kindStays || len(ns.byKind) > 1
	f.remove(e) // a line that leaves passes its turn on itself
	if kindStays {
		ns.kinds.pass()
	}
	if nsStays {
		f.namespaces.pass()
	}
	return e
}
