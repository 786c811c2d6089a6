package main

// Steering the bench's TaskRun pods, and only those, to the fake node.
//
// Tekton's default pod template (config-defaults) would do it for every
// TaskRun on the cluster: what else runs there meanwhile (make demo's
// every-minute RunConfiguration in team-a) would have its pods "run" by
// kwok, which ends them at once with made-up results. So a mutating
// admission webhook, served by the bench itself and selecting the bench's
// namespace alone, gives the pods of its TaskRuns the fake node's selector
// and toleration.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/localcluster"
)

const (
	// steeringLabel marks the bench's webhook configurations, so a run
	// killed before removing its own has it removed by the next.
	steeringLabel = "kfp-tekton.bench/steering"
	// taskRunPodLabel is on every pod Tekton makes for a TaskRun.
	taskRunPodLabel = "tekton.dev/taskRun"
)

// steeredNamespaces are the namespaces whose TaskRun pods go to the fake
// node: the bench's and, with the direct phase run again, its namespace.
func (b *bench) steeredNamespaces() []string {
	if b.againNS != "" {
		return []string{b.ns, b.againNS}
	}
	return []string{b.ns}
}

// steerTaskRunPods serves the webhook and registers it for the bench's
// namespace (which must exist), checks with a server-side dry run that it
// steers, and returns what unregisters and stops it.
func (b *bench) steerTaskRunPods(ctx context.Context) (func(), error) {
	if err := b.undoEarlierSteering(ctx); err != nil {
		return nil, err
	}
	host := localcluster.DefaultNetwork.NodeIP // kube-apiserver shares the bench's network namespace
	cert, caPEM, err := selfSignedCert(host, 4*b.limit+24*time.Hour)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host.String(), "0"))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", servePodSteering)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	}()

	url := fmt.Sprintf("https://%s/mutate", ln.Addr())
	config := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-bench-" + b.ns, Labels: map[string]string{steeringLabel: "true"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "steer.scale-bench.kfp-tekton.local",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
			}},
			// The bench's namespaces and TaskRun pods only; should the bench
			// be gone, they fail to start rather than run on the real node.
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: b.steeredNamespaces()}}},
			ObjectSelector:          &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: taskRunPodLabel, Operator: metav1.LabelSelectorOpExists}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	stop := func() {
		_ = b.c.Delete(context.Background(), config)
		_ = srv.Close()
	}
	if err := b.c.Create(ctx, config); err != nil {
		stop()
		return nil, err
	}
	// The API server sees a new configuration a moment later; a pod
	// created in the dry run shows when it steers.
	var last string
	err = b.waitFor(ctx, time.Minute, "the steering webhook in effect", func() (bool, error) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: "steering-probe", Labels: map[string]string{taskRunPodLabel: "steering-probe"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
		}
		if err := b.c.Create(ctx, probe, client.DryRunAll); err != nil {
			last = err.Error() // e.g. the namespace's default account not made yet
			return false, nil
		}
		last = fmt.Sprintf("a dry-run pod got nodeSelector %v", probe.Spec.NodeSelector)
		return probe.Spec.NodeSelector[fakeNodeLabel] == "true", nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w; last: %s", err, last)
	}
	return stop, nil
}

// undoEarlierSteering removes what an earlier bench that did not finish
// left steering: its webhook configuration (its namespace's pods only, but
// it names a server that is gone), and, from before the webhook, Tekton's
// default pod template, which steered every TaskRun on the cluster.
func (b *bench) undoEarlierSteering(ctx context.Context) error {
	if err := b.c.DeleteAllOf(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{},
		client.MatchingLabels{steeringLabel: "true"}); err != nil {
		return err
	}
	defaults := &corev1.ConfigMap{}
	if err := b.c.Get(ctx, client.ObjectKey{Namespace: tektonNamespace, Name: "config-defaults"}, defaults); err != nil {
		return err
	}
	saved, ok := defaults.Annotations[savedPodTemplate]
	if !ok {
		return nil
	}
	var template any // null removes the key
	if saved != "" {
		template = saved
	}
	fmt.Fprintln(os.Stderr, "scale-bench: restoring Tekton's default pod template, which an earlier run left steering every TaskRun to the fake node")
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{savedPodTemplate: nil}},
		"data":     map[string]any{"default-pod-template": template},
	})
	if err != nil {
		return err
	}
	return b.c.Patch(ctx, defaults, client.RawPatch("application/merge-patch+json", patch))
}

// savedPodTemplate is where benches before the webhook kept the default
// pod template to restore.
const savedPodTemplate = "kfp-tekton.bench/saved-default-pod-template"

// servePodSteering answers an AdmissionReview of a pod's create with the
// patch steerPod makes.
func servePodSteering(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	response := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var pod corev1.Pod
	if err := json.Unmarshal(review.Request.Object.Raw, &pod); err != nil {
		response.Allowed = false
		response.Result = &metav1.Status{Message: "scale-bench: not a pod: " + err.Error()}
	} else if patch, err := steerPod(&pod); err != nil {
		response.Allowed = false
		response.Result = &metav1.Status{Message: "scale-bench: " + err.Error()}
	} else {
		response.Patch, response.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	review.Request, review.Response = nil, response
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// steerPod is the JSON patch that gives pod the fake node's selector and
// toleration, beside those it has.
func steerPod(pod *corev1.Pod) ([]byte, error) {
	selector := map[string]string{}
	for k, v := range pod.Spec.NodeSelector {
		selector[k] = v
	}
	selector[fakeNodeLabel] = "true"
	toleration := corev1.Toleration{Key: fakeNodeLabel, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	tolerations := append([]corev1.Toleration{}, pod.Spec.Tolerations...)
	has := false
	for _, t := range tolerations {
		has = has || t.MatchToleration(&toleration)
	}
	if !has {
		tolerations = append(tolerations, toleration)
	}
	// "add" sets an object's member whether or not it is there.
	return json.Marshal([]map[string]any{
		{"op": "add", "path": "/spec/nodeSelector", "value": selector},
		{"op": "add", "path": "/spec/tolerations", "value": tolerations},
	})
}

// selfSignedCert is a serving certificate for ip, its own CA (the
// webhook's caBundle is its PEM).
func selfSignedCert(ip net.IP, valid time.Duration) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "scale-bench steering webhook"},
		IPAddresses:           []net.IP{ip},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(valid),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
