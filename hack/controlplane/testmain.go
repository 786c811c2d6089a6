package controlplane

import (
	"fmt"
	"os"
	"testing"
)

// RunTests starts a control plane, stores it in *cp, runs the package's tests
// and stops it. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(controlplane.RunTests(m, &cp)) }
func RunTests(m *testing.M, cp **ControlPlane) int {
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
