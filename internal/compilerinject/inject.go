// Package compilerinject is the inject-compiler half of the shared Tasks'
// compile contract (tasks/README.md): a compiler image's entrypoint, run
// with one argument DIR, copies itself there as the executable compile.sh
// that the compile step then runs inside the pipeline's image.
package compilerinject

import (
	"io"
	"os"
	"path/filepath"
)

// Script is the name the compile step runs.
const Script = "compile.sh"

// Self copies the running binary to DIR/compile.sh, executable whatever
// the umask. It reads /proc/self/exe, not os.Args[0], which need not be a
// path to the binary.
func Self(dir string) error {
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer self.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(dir, Script), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, self)
	if err == nil {
		err = out.Chmod(0o755)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
