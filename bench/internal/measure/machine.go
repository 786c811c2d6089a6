package measure

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Machine is a snapshot of where the whole machine's CPU has gone so far:
// each process's CPU seconds with the name it is reported under, and the
// machine's busy and total CPU seconds from /proc/stat.
type Machine struct {
	procs       map[int]namedCPU
	busy, total float64
}

// userHZ is the clock ticks per second /proc counts CPU time in (USER_HZ on Linux).
const userHZ = 100

type namedCPU struct {
	name    string
	seconds float64
}

// TakeMachine reads every process's CPU time and the machine's counters.
// The local cluster shares the host's PID namespace, so its control plane,
// kubelet and containers are all here.
func TakeMachine() Machine {
	m := Machine{procs: map[int]namedCPU{}}
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		m.busy, m.total = parseProcStat(string(data))
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		comm, seconds := parsePIDStat(string(stat))
		m.procs[pid] = namedCPU{name: processName(comm, string(environ)), seconds: seconds}
	}
	return m
}

// CPUShare is one name's CPU seconds in a span.
type CPUShare struct {
	Name    string
	Seconds float64
}

// MachineSpan is where the CPU went between two snapshots.
type MachineSpan struct {
	Busy, Total float64 // machine CPU seconds busy, and available (cores × wall time)
	Shares      []CPUShare
}

// Since is the CPU spent from before to m, summed by name, largest first.
// A process started in between counts whole; one that ended in between
// is missing (its time shows only in Busy).
func (m Machine) Since(before Machine) MachineSpan {
	byName := map[string]float64{}
	for pid, now := range m.procs {
		spent := now.seconds
		if was, ok := before.procs[pid]; ok && was.name == now.name && was.seconds <= now.seconds {
			spent -= was.seconds
		}
		byName[now.name] += spent
	}
	s := MachineSpan{Busy: m.busy - before.busy, Total: m.total - before.total}
	for name, sec := range byName {
		s.Shares = append(s.Shares, CPUShare{Name: name, Seconds: sec})
	}
	sort.Slice(s.Shares, func(i, j int) bool {
		if s.Shares[i].Seconds != s.Shares[j].Seconds {
			return s.Shares[i].Seconds > s.Shares[j].Seconds
		}
		return s.Shares[i].Name < s.Shares[j].Name
	})
	return s
}

// Of is the CPU seconds spent under name in the span (0 if none).
func (s MachineSpan) Of(name string) float64 {
	for _, sh := range s.Shares {
		if sh.Name == name {
			return sh.Seconds
		}
	}
	return 0
}

// String is the span's busy share and its top consumers, one line.
func (s MachineSpan) String() string {
	var b strings.Builder
	if s.Total > 0 {
		fmt.Fprintf(&b, "busy %.0f of %.0f CPU s (%.0f %%)", s.Busy, s.Total, 100*s.Busy/s.Total)
	}
	for i, sh := range s.Shares {
		if i == 8 || sh.Seconds < 0.5 {
			break
		}
		fmt.Fprintf(&b, "; %s %.1f s", sh.Name, sh.Seconds)
	}
	return b.String()
}

// parseProcStat is the machine's busy and total CPU seconds from the
// "cpu" line of /proc/stat (user nice system idle iowait irq softirq steal;
// guest time is already inside user).
func parseProcStat(data string) (busy, total float64) {
	for _, line := range strings.Split(data, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		for i, f := range fields[1:9] {
			v, _ := strconv.ParseFloat(f, 64)
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
		return busy / userHZ, total / userHZ
	}
	return 0, 0
}

// parsePIDStat is a /proc/PID/stat line's command and user + system CPU seconds.
func parsePIDStat(stat string) (comm string, seconds float64) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0
	}
	comm = stat[open+1 : end]
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return comm, 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return comm, (utime + stime) / userHZ
}

// podSuffix is what a Deployment's ReplicaSet and a pod's generated name add.
var podSuffix = regexp.MustCompile(`(-[a-z0-9]{6,10})?-[a-z0-9]{5}$`)

// processName names a container's process by its pod (without the
// generated suffixes, so every replica and restart counts together) and
// any other process by its command.
func processName(comm, environ string) string {
	if pod, ok := PodOf(environ); ok {
		return podSuffix.ReplaceAllString(pod, "")
	}
	// The kernel renames a worker thread after the work it is doing
	// ("kworker/u8:3-events_unbound"): count them all as one.
	if strings.HasPrefix(comm, "kworker/") {
		return "kworker"
	}
	return comm
}

// PodOf is the pod a process runs in, from its environment
// (/proc/PID/environ): its HOSTNAME, when KUBERNETES_SERVICE_HOST tells a
// container's process from the node's own (and pause processes, which the
// kubelet gives no environment).
func PodOf(environ string) (string, bool) {
	var host string
	inPod := false
	for _, kv := range strings.Split(environ, "\x00") {
		if v, ok := strings.CutPrefix(kv, "HOSTNAME="); ok {
			host = v
		}
		inPod = inPod || strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=")
	}
	return host, inPod && host != ""
}
