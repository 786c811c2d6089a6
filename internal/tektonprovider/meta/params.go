package meta

// The Provider parameter naming the account the Tekton provider's ML
// pipeline steps run as. The Tekton provider reads it (tektonprovider's
// settings); the operator checks, with a shared workflowNamespace, that the
// account is marked for the Provider. It lives here, beside the labels both
// share, so the operator need not link the Tekton provider to know it.
const (
	ParamPipelineServiceAccount = "pipelineServiceAccount"
	// DefaultPipelineServiceAccount is the account the steps run as when the
	// parameter is not set: the workflow namespace's "default".
	DefaultPipelineServiceAccount = "default"
)
