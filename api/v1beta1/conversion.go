package v1beta1

// The kinds of this version are the conversion hub: older versions (such as
// kfp-operator's v1alpha6, package api/v1alpha6) convert to and from them.

// Hub marks Pipeline as the conversion hub.
func (*Pipeline) Hub() {}

// Hub marks RunConfiguration as the conversion hub.
func (*RunConfiguration) Hub() {}

// Hub marks RunSchedule as the conversion hub.
func (*RunSchedule) Hub() {}

// Hub marks Run as the conversion hub.
func (*Run) Hub() {}

// Hub marks Experiment as the conversion hub.
func (*Experiment) Hub() {}

// Hub marks Provider as the conversion hub.
func (*Provider) Hub() {}
