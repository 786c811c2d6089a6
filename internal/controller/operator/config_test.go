package operator

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults are valid; what has no meaning is refused, each setting
// named.
func TestConfigDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Config){
		"kubeAPIQPS":              func(c *Config) { c.KubeAPIQPS = 0 },
		"maxConcurrentReconciles": func(c *Config) { c.MaxConcurrentReconciles = 0 },
		"retryBackoffBase":        func(c *Config) { c.RetryBackoffBase = metav1.Duration{} },
		"operationTimeout":        func(c *Config) { c.OperationTimeout = metav1.Duration{Duration: -time.Second} },
		"keepRunsPerOperation":    func(c *Config) { c.KeepRunsPerOperation = -1 },
		"maxOperationsInFlight":   func(c *Config) { c.MaxOperationsInFlight = -1 },
		"runCompletionTTL":        func(c *Config) { c.RunCompletionTTL = metav1.Duration{Duration: -time.Second} },
		"eventsTokenAudience":     func(c *Config) { c.EventsTokenAudience = "" },
		"compileVolumeSize":       func(c *Config) { c.CompileVolumeSize = "big" },
		"event sink":              func(c *Config) { c.EventSinks = []EventSink{{Name: "a", URL: "ftp://x/"}} },
	} {
		c := Default()
		change(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
