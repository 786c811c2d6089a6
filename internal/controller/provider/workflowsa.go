package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"
)

var errServiceAccountNotAllowed = errors.New("service account not marked for this Provider")

// marksProvider says whether the annotation value lists provider
// ("namespace/name"), ignoring spaces around the entries.
func marksProvider(annotation, provider string) bool {
	for _, entry := range strings.Split(annotation, ",") {
		if strings.TrimSpace(entry) == provider {
			return true
		}
	}
	return false
}

// workflowAccount is an account of the shared workflow namespace a Provider
// runs something as, so one that must be marked for it.
type workflowAccount struct {
	name string
	// use says what runs as the account, in the refusal's words.
	use string
	// otherwise is the way out besides marking the account, if any.
	otherwise string
	// mayBeMissing: the account's absence is reported elsewhere (the
	// Provider's own account: ServiceAccountNotFound), not refused here.
	mayBeMissing bool
}

// accountsToMark are the accounts p runs as in the shared workflow
// namespace: its own (the provider step, its provider service) and the one
// its pipeline steps run as. The pipeline steps run images tenants name,
// so an unmarked account there could be another team's, lending its rights
// and cloud identity to this Provider's tenants.
func accountsToMark(p *pipelinesv1beta1.Provider) ([]workflowAccount, error) {
	own := workflowAccount{name: p.Spec.ServiceAccount, use: "the Provider's own service account", mayBeMissing: true}
	steps, err := pipelineStepsAccount(p)
	if err != nil || steps == nil {
		return []workflowAccount{own}, err
	}
	return []workflowAccount{own, *steps}, nil
}

// pipelineStepsAccount is the account p's pipeline steps run as, as far as
// the operator can tell, or nil when it has none to check:
//
//   - parameter pipelineServiceAccount set: the account it names, for any
//     Provider (the key means the same to whichever backend reads it).
//   - not set, p runs a provider image (spec.image): "default", the
//     account the Tekton provider then runs the steps as. The operator cannot
//     tell the Tekton provider from another image, so it assumes the steps
//     may run as it: "default" of a shared namespace is no team's account
//     unless the platform engineer made it one, and then only the Providers
//     it is marked for may run steps as it.
//   - not set, p is a provider service (spec.serviceImage): none; the
//     Tekton provider, whose default that is, is never a provider service.
//
// A value naming no account (not a string, not an object name) is refused:
// the operator could not tell which account the steps would run as.
func pipelineStepsAccount(p *pipelinesv1beta1.Provider) (*workflowAccount, error) {
	raw, set := p.Spec.Parameters[meta.ParamPipelineServiceAccount]
	if !set {
		if p.Spec.ServiceImage != "" {
			return nil, nil
		}
		return &workflowAccount{
			name: meta.DefaultPipelineServiceAccount,
			use: fmt.Sprintf("the account the Provider's pipeline steps run as while its parameter %s is not set",
				meta.ParamPipelineServiceAccount),
			otherwise: fmt.Sprintf("or the Provider names an account marked for it in its parameter %s",
				meta.ParamPipelineServiceAccount),
		}, nil
	}
	var name string
	if err := json.Unmarshal(raw.Raw, &name); err != nil {
		return nil, fmt.Errorf("%w: the Provider's parameter %s must name a service account of the workflow namespace, not %s",
			errServiceAccountNotAllowed, meta.ParamPipelineServiceAccount, raw.Raw)
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return nil, fmt.Errorf("%w: the Provider's parameter %s %q names no service account: %s",
			errServiceAccountNotAllowed, meta.ParamPipelineServiceAccount, name, problems[0])
	}
	return &workflowAccount{
		name: name,
		use:  fmt.Sprintf("the account the Provider's parameter %s names for its pipeline steps", meta.ParamPipelineServiceAccount),
	}, nil
}

// refusal says why provider ("namespace/name") may not run as account of
// workflowNamespace, read as sa (nil: it does not exist), or nil if it may.
func refusal(workflowNamespace, provider string, account workflowAccount, sa *corev1.ServiceAccount) error {
	howToAllow := fmt.Sprintf("the platform engineer adds it (%s: %q)", contract.AnnotationProviders, provider)
	if account.otherwise != "" {
		howToAllow += ", " + account.otherwise
	}
	switch {
	case sa == nil && account.mayBeMissing:
		return nil
	case sa == nil:
		// A missing account is marked for no one: one created later must be
		// marked before the Provider may use it.
		return fmt.Errorf("%w: service account %s/%s (%s) does not exist; the platform engineer creates it, marked for %s (%s: %q)",
			errServiceAccountNotAllowed, workflowNamespace, account.name, account.use, provider, contract.AnnotationProviders, provider)
	case marksProvider(sa.Annotations[contract.AnnotationProviders], provider):
		return nil
	}
	// The message names only the entry to add, not those already there:
	// they are other teams' Providers, which this Provider's readers need not learn.
	return fmt.Errorf("%w: service account %s/%s (%s) may run only the Providers its annotation %s lists, and %s is not among them; %s",
		errServiceAccountNotAllowed, workflowNamespace, account.name, account.use, contract.AnnotationProviders, provider, howToAllow)
}

// checkWorkflowServiceAccount refuses a Provider outside the workflow
// namespace that would run there as an account not marked for it (see
// accountsToMark). A Provider in the workflow namespace itself names
// accounts of its own namespace, as without a workflowNamespace.
func checkWorkflowServiceAccount(ctx context.Context, reader client.Reader, workflowNamespace string, p *pipelinesv1beta1.Provider) error {
	if workflowNamespace == "" || p.Namespace == workflowNamespace {
		return nil
	}
	accounts, err := accountsToMark(p)
	if err != nil {
		return err
	}
	provider := p.Namespace + "/" + p.Name
	for _, account := range accounts {
		sa, err := readServiceAccount(ctx, reader, workflowNamespace, account.name)
		if err != nil {
			return err
		}
		if err := refusal(workflowNamespace, provider, account, sa); err != nil {
			return err
		}
	}
	return nil
}

// readServiceAccount reads an account of namespace; nil when it does not exist.
func readServiceAccount(ctx context.Context, reader client.Reader, namespace, name string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sa); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return sa, nil
}
