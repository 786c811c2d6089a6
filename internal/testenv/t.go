package testenv

// T is what the harness needs of a test or benchmark; *testing.T and
// *testing.B satisfy it. Taking it rather than testing.TB keeps the
// testing package out of the binaries that link this harness (bench/).
type T interface {
	Helper()
	Error(args ...any)
	Fatal(args ...any)
	Cleanup(func())
	TempDir() string
}

// M is what RunTests needs of a test binary; *testing.M satisfies it.
type M interface{ Run() int }
