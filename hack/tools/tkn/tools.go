//go:build tools

package tools

import _ "github.com/tektoncd/cli/cmd/tkn"
