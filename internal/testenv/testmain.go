package testenv

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RunTests starts a control plane, stores it in *cp, runs the package's tests
// and stops it. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }
func RunTests(m M, cp **ControlPlane) int {
	// Fuzzing (go test -fuzz, the coordinator and its workers) runs only a
	// fuzz target, which needs no control plane: starting one per worker
	// process would leave the fuzzer no time to fuzz.
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return m.Run()
	}
	started, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "control plane:", err)
		return 1
	}
	*cp = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping control plane:", err)
	}
	return code
}

// Kubectl runs the real kubectl as cluster-admin against the control plane,
// in the repository root, and returns its combined output.
func (cp *ControlPlane) Kubectl(t T, stdin string, args ...string) (string, error) {
	t.Helper()
	kubeconfig, err := cp.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", path}, args...)...)
	cmd.Dir = RepoRoot()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
