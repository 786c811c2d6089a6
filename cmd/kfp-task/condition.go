package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// condition decides a KFP condition (a compiled pipeline's condition
// task): it evaluates the CEL over the inputs, each given as its key, its
// KFP type and its text (or a file holding the text: an earlier step's
// result), and writes true or false to the result file.
//
//	kfp-task condition --condition CEL --result PATH [--param KEY TYPE TEXT | --param-file KEY TYPE PATH ...]
//
// A condition that cannot be evaluated (an input that is not of its type,
// a CEL error) fails the task, as KFP's driver fails the run.
func condition(args []string) error {
	var expr, result string
	values := map[string]*structpb.Value{}
	for len(args) > 0 {
		switch {
		case args[0] == "--condition" && len(args) >= 2:
			expr, args = args[1], args[2:]
		case args[0] == "--result" && len(args) >= 2:
			result, args = args[1], args[2:]
		case (args[0] == "--param" || args[0] == "--param-file") && len(args) >= 4:
			key, typ, text := args[1], args[2], args[3]
			if args[0] == "--param-file" {
				data, err := os.ReadFile(text)
				if err != nil {
					return fmt.Errorf("condition: input %q: %w", key, err)
				}
				text = string(data)
			}
			if _, dup := values[key]; dup {
				return fmt.Errorf("condition: input %q given twice", key)
			}
			v, err := launcher.Value(typ, text)
			if err != nil {
				return fmt.Errorf("condition: input %q: %w", key, err)
			}
			values[key] = v
			args = args[4:]
		default:
			return fmt.Errorf("condition: unexpected %q (want --condition CEL --result PATH [--param KEY TYPE TEXT | --param-file KEY TYPE PATH ...])", args[0])
		}
	}
	if expr == "" || result == "" {
		return errors.New("condition: --condition and --result are required")
	}
	ok, err := kfpcel.Condition(expr, values)
	if err != nil {
		return err
	}
	fmt.Printf("condition %s is %t\n", expr, ok)
	return os.WriteFile(result, []byte(strconv.FormatBool(ok)), 0o644)
}
