package v1beta1

// The methods below let the controllers treat every user resource alike:
// its shared status and the provider it references.

// CommonStatus returns the status every user resource shares.
func (p *Pipeline) CommonStatus() *Status { return &p.Status }

// CommonStatus returns the status every user resource shares.
func (r *Run) CommonStatus() *Status { return &r.Status.Status }

// CommonStatus returns the status every user resource shares.
func (r *RunSchedule) CommonStatus() *Status { return &r.Status }

// CommonStatus returns the status every user resource shares.
func (r *RunConfiguration) CommonStatus() *Status { return &r.Status.Status }

// CommonStatus returns the status every user resource shares.
func (e *Experiment) CommonStatus() *Status { return &e.Status }

// ProviderReference is the provider the resource uses.
func (p *Pipeline) ProviderReference() ProviderReference { return p.Spec.Provider }

// ProviderReference is the provider the resource uses.
func (r *Run) ProviderReference() ProviderReference { return r.Spec.Provider }

// ProviderReference is the provider the resource uses.
func (r *RunSchedule) ProviderReference() ProviderReference { return r.Spec.Provider }

// ProviderReference is the provider the resource uses.
func (r *RunConfiguration) ProviderReference() ProviderReference { return r.Spec.Run.Provider }

// ProviderReference is the provider the resource uses.
func (e *Experiment) ProviderReference() ProviderReference { return e.Spec.Provider }
