package main

import "testing"

func TestPhasesFromFlags(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		skipDirect, directOnce, skipOperator bool
		want                                 phases
		wantErr                              bool
	}{
		{name: "default: direct, operator, direct again", want: phases{direct: true, operator: true, again: true}},
		{name: "direct once", directOnce: true, want: phases{direct: true, operator: true}},
		{name: "no direct phase at all", skipDirect: true, want: phases{operator: true}},
		{name: "skip-direct outranks direct-once", skipDirect: true, directOnce: true, want: phases{operator: true}},
		{name: "Tekton alone twice", skipOperator: true, want: phases{direct: true, again: true}},
		{name: "nothing but one direct phase", skipOperator: true, directOnce: true, wantErr: true},
		{name: "nothing at all", skipOperator: true, skipDirect: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := phasesFromFlags(tc.skipDirect, tc.directOnce, tc.skipOperator)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("phases %+v, want %+v", got, tc.want)
			}
		})
	}
}
