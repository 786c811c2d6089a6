package eventserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/completion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
)

var answered = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kfp_tekton_operator_events_received_total",
	Help: "Run-completion events posted to /events, by HTTP status answered.",
}, []string{"code"})

func init() { metrics.Registry.MustRegister(answered) }

// answer is an HTTP status and the words that explain it.
type answer struct {
	code int
	msg  string
	// retryAfter, in seconds, when not 0: when to try again (503).
	retryAfter int
}

func (a answer) Error() string { return a.msg }

func fail(code int, format string, args ...any) error {
	return answer{code: code, msg: fmt.Sprintf(format, args...)}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h.serve(r)
	a := answer{code: http.StatusOK, msg: "applied"}
	if err != nil && !errors.As(err, &a) {
		ctrl.Log.WithName("events").Error(err, "applying a posted completion")
		a = answer{code: http.StatusInternalServerError, msg: "the operator could not apply the event: " + err.Error()}
	}
	answered.WithLabelValues(fmt.Sprint(a.code)).Inc()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(a.retryAfter))
	}
	w.WriteHeader(a.code)
	_, _ = io.WriteString(w, a.msg+"\n")
}

func (h *Handler) serve(r *http.Request) error {
	if r.Method != http.MethodPost {
		return fail(http.StatusMethodNotAllowed, "POST a run-completion event")
	}
	ctx := r.Context()
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return fail(http.StatusUnauthorized, "no bearer token: send a token of the Provider's service account for audience %s",
			runcompletion.ProviderAudience(h.Audience, "<provider namespace>", "<provider name>"))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return fail(http.StatusBadRequest, "reading the body: %v", err)
	}
	if len(body) > MaxBody {
		return fail(http.StatusRequestEntityTooLarge, "the body is over %d bytes", MaxBody)
	}
	ev, err := runcompletion.Decode(body)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	caller, err := h.authenticate(ctx, token, runcompletion.ProviderAudience(h.Audience, ev.Provider.Namespace, ev.Provider.Name))
	if err != nil {
		return err
	}
	g := h.guarded()
	leave, err := g.applying.enter(ctx, g.limits.Wait, g.limits.RetryAfter)
	if err != nil {
		return err
	}
	defer leave()
	provider, err := h.provider(ctx, ev.Provider)
	if err != nil {
		return err
	}
	if provider == nil || Authorised(caller, provider) != nil {
		// One answer whether the Provider is missing or not the caller's:
		// a token anyone can mint for their own account tells nothing of
		// other namespaces' Providers.
		return fail(http.StatusForbidden, "service account %s may not report for Provider %s: it does not exist, or reports as another account",
			caller, ev.Provider)
	}
	return h.apply(ctx, ev, provider)
}

// authenticate returns the service account ("namespace", "name") whose
// token this is, issued for audience (the reporting Provider's): from the
// cache when it was reviewed valid moments ago, else from a TokenReview in
// the lane the cache says the token belongs to (see Limits).
func (h *Handler) authenticate(ctx context.Context, token, audience string) (types.NamespacedName, error) {
	g := h.guarded()
	key := keyOf(token, audience)
	caller, known := g.reviews.lookup(key)
	in := g.unknownTokens
	switch known {
	case fresh:
		tokenCacheLookups.WithLabelValues("hit").Inc()
		return caller, nil
	case familiar:
		tokenCacheLookups.WithLabelValues("familiar").Inc()
		in = g.familiarTokens
	default:
		tokenCacheLookups.WithLabelValues("miss").Inc()
	}
	leave, err := in.enter(ctx, g.limits.Wait, g.limits.RetryAfter)
	if err != nil {
		return types.NamespacedName{}, err
	}
	defer leave()
	// While this request waited, another with the same token (a provider
	// service posting a burst) may have had it reviewed.
	if caller, known := g.reviews.lookup(key); known == fresh {
		return caller, nil
	}
	caller, err = h.review(ctx, token, audience, g.limits.ReviewTimeout)
	var refused answer
	switch {
	case errors.As(err, &refused):
		g.reviews.forget(key) // no longer valid: no longer familiar either
	case err == nil:
		g.reviews.store(key, caller, tokenExpiry(token))
	}
	return caller, err
}

// review asks the API server whose token this is, for audience.
func (h *Handler) review(ctx context.Context, token, audience string, timeout time.Duration) (types.NamespacedName, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{audience}}}
	if err := h.Client.Create(ctx, review); err != nil {
		return types.NamespacedName{}, fmt.Errorf("token review: %w", err)
	}
	if !review.Status.Authenticated || !slices.Contains(review.Status.Audiences, audience) {
		return types.NamespacedName{}, fail(http.StatusUnauthorized, "the token is not valid for audience %q", audience)
	}
	sa, ok := ServiceAccount(review.Status.User.Username)
	if !ok {
		return types.NamespacedName{}, fail(http.StatusForbidden, "%s is not a service account", review.Status.User.Username)
	}
	return sa, nil
}

// ServiceAccount parses a service account's user name.
func ServiceAccount(username string) (types.NamespacedName, bool) {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	ns, name, found := strings.Cut(rest, ":")
	if !ok || !found || ns == "" || name == "" || strings.Contains(name, ":") {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// Authorised says whether caller may report for p: it must be p's service
// account, in p's namespace or where p runs its workflows.
func Authorised(caller types.NamespacedName, p *pipelinesv1beta1.Provider) error {
	if caller.Name == p.Spec.ServiceAccount && (caller.Namespace == p.Namespace || caller.Namespace == p.Status.WorkflowNamespace) {
		return nil
	}
	return fail(http.StatusForbidden, "service account %s may not report for Provider %s/%s", caller, p.Namespace, p.Name)
}

func (h *Handler) provider(ctx context.Context, name runcompletion.NamespacedName) (*pipelinesv1beta1.Provider, error) {
	var p pipelinesv1beta1.Provider
	err := h.Client.Get(ctx, types.NamespacedName{Namespace: name.Namespace, Name: name.Name}, &p)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return &p, err
}

// apply records the completion on the Run and the RunConfiguration the
// event names. 410 only when none of them is there to take it.
func (h *Handler) apply(ctx context.Context, ev runcompletion.EventData, p *pipelinesv1beta1.Provider) error {
	gone := []string{}
	if ev.RunName != nil {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var run pipelinesv1beta1.Run
			if err := h.Client.Get(ctx, types.NamespacedName{Namespace: ev.RunName.Namespace, Name: ev.RunName.Name}, &run); err != nil {
				return err
			}
			take, err := RunTakes(&run, p, ev)
			if err != nil || take == replayed {
				return err
			}
			return h.Completions.CompleteRun(ctx, &run, completionOf(ev, run.Status.Provider.ID))
		})
		switch {
		case apierrors.IsNotFound(err):
			gone = append(gone, "Run "+ev.RunName.String())
		case err != nil:
			// Refused (or not recorded): the RunConfiguration must not
			// take what its Run did not.
			return err
		}
	}
	// Without its Run (deleted meanwhile), the RunConfiguration carries
	// the event.
	carriesEvent := ev.RunName == nil || len(gone) > 0
	if ev.RunConfigurationName != nil {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var rc pipelinesv1beta1.RunConfiguration
			if err := h.Client.Get(ctx, types.NamespacedName{Namespace: ev.RunConfigurationName.Namespace, Name: ev.RunConfigurationName.Name}, &rc); err != nil {
				return err
			}
			if err := RunConfigurationTakes(&rc, p, ev); err != nil {
				return err
			}
			return h.Completions.RecordForRunConfiguration(ctx, &rc, completionOf(ev, ""), carriesEvent)
		})
		switch {
		case apierrors.IsNotFound(err):
			gone = append(gone, "RunConfiguration "+ev.RunConfigurationName.String())
		case err != nil:
			return err
		}
	}
	if n := len(gone); n > 0 && n == countNamed(ev) {
		return fail(http.StatusGone, "no %s", strings.Join(gone, " and no "))
	}
	return nil
}

func countNamed(ev runcompletion.EventData) int {
	n := 0
	if ev.RunName != nil {
		n++
	}
	if ev.RunConfigurationName != nil {
		n++
	}
	return n
}

// take is what a Run does with a completion it may take.
type take int

const (
	// record the completion: the Run has none yet.
	record take = iota
	// replayed: the Run already completed so; nothing changes.
	replayed
)

// RunTakes says whether run takes the event p reported, as kfp-operator
// keys completions: by the Run's name and Provider, whatever the backend
// run id. Provider services do not keep the id a create answers and the
// id their completion carries equal (kfp-operator's stub and Vertex AI
// services), nor wait for the create's answer to be recorded before they
// post: so neither is asked of them. The Run must run on p (by its spec,
// and by its status once synchronised) in a namespace p admits; a Run
// completes once, and a report of another state for it is refused.
func RunTakes(run *pipelinesv1beta1.Run, p *pipelinesv1beta1.Provider, ev runcompletion.EventData) (take, error) {
	ref := pipelinesv1beta1.ProviderKey(run.Spec.Provider, run.Namespace).String()
	state := stateOf(ev)
	switch {
	case ref != ev.Provider.String():
		return 0, fail(http.StatusForbidden, "Run %s/%s runs on Provider %s, not %s", run.Namespace, run.Name, ref, ev.Provider)
	case run.Status.Provider.Name != "" && run.Status.Provider.Name != ev.Provider.String():
		return 0, fail(http.StatusForbidden, "Run %s/%s is synchronised with Provider %q, not %s", run.Namespace, run.Name, run.Status.Provider.Name, ev.Provider)
	case !p.Admits(run.Namespace):
		return 0, fail(http.StatusForbidden, "Provider %s does not allow namespace %s", ev.Provider, run.Namespace)
	case run.Status.CompletionState == state:
		return replayed, nil
	case run.Status.CompletionState != "":
		return 0, fail(http.StatusConflict, "Run %s/%s already completed as %s: a completion is recorded once", run.Namespace, run.Name, run.Status.CompletionState)
	}
	return record, nil
}

// RunConfigurationTakes says whether rc takes the event: its run spec must
// name the reporting Provider, and that Provider admit rc's namespace.
func RunConfigurationTakes(rc *pipelinesv1beta1.RunConfiguration, p *pipelinesv1beta1.Provider, ev runcompletion.EventData) error {
	ref := pipelinesv1beta1.ProviderKey(rc.Spec.Run.Provider, rc.Namespace).String()
	if ref != ev.Provider.String() {
		return fail(http.StatusForbidden, "RunConfiguration %s/%s runs on Provider %s, not %s", rc.Namespace, rc.Name, ref, ev.Provider)
	}
	if !p.Admits(rc.Namespace) {
		return fail(http.StatusForbidden, "Provider %s does not allow namespace %s", ev.Provider, rc.Namespace)
	}
	return nil
}

// stateOf is the completion state a posted event reports.
func stateOf(ev runcompletion.EventData) pipelinesv1beta1.CompletionState {
	if ev.Status == runcompletion.Failed {
		return pipelinesv1beta1.CompletionStateFailed
	}
	return pipelinesv1beta1.CompletionStateSucceeded
}

// completionOf is what a posted event means for the resources it names;
// created is the backend id the Run's create recorded, if any and known.
// The event's runId is the completion's backend run id either way.
func completionOf(ev runcompletion.EventData, created string) completion.Completion {
	state := stateOf(ev)
	verb := "succeeded"
	if state == pipelinesv1beta1.CompletionStateFailed {
		verb = "failed"
	}
	ended := metav1.NewTime(time.Now().Truncate(time.Second))
	if ev.RunEndTime != nil {
		ended = metav1.NewTime(ev.RunEndTime.Truncate(time.Second))
	}
	if ev.ServingModelArtifacts == nil {
		ev.ServingModelArtifacts = []runcompletion.Artifact{}
	}
	if ev.PipelineComponents == nil {
		ev.PipelineComponents = []runcompletion.PipelineComponent{}
	}
	run := "backend run " + ev.RunID
	if created != "" && created != ev.RunID {
		run += " (created as " + created + ")"
	}
	return completion.Completion{State: state, EndedAt: ended, Event: ev,
		Message: fmt.Sprintf("%s %s, as Provider %s reported", run, verb, ev.Provider),
		From:    "Provider " + ev.Provider.String()}
}
