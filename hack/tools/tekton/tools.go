//go:build tools

package tools

import (
	_ "github.com/tektoncd/pipeline/cmd/controller"
	_ "github.com/tektoncd/pipeline/cmd/entrypoint"
	_ "github.com/tektoncd/pipeline/cmd/events"
	_ "github.com/tektoncd/pipeline/cmd/nop"
	_ "github.com/tektoncd/pipeline/cmd/sidecarlogresults"
	_ "github.com/tektoncd/pipeline/cmd/webhook"
	_ "github.com/tektoncd/pipeline/cmd/workingdirinit"
)
