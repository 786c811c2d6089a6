package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// review is what kube-apiserver posts for a pod's create.
func review(t *testing.T, pod *corev1.Pod) []byte {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &admissionv1.AdmissionRequest{UID: "7e57", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestServePodSteeringPatchesSelectorAndToleration(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "e-1-pod", Labels: map[string]string{taskRunPodLabel: "e-1"}},
		Spec: corev1.PodSpec{
			Containers:   []corev1.Container{{Name: "step-report", Image: "report"}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			// As DefaultTolerationSeconds leaves them.
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		},
	}
	w := httptest.NewRecorder()
	servePodSteering(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(review(t, pod))))
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.APIVersion != "admission.k8s.io/v1" || answer.Kind != "AdmissionReview" || answer.Request != nil {
		t.Errorf("answer %s %s, request %v: want the request's apiVersion and kind, no request", answer.APIVersion, answer.Kind, answer.Request)
	}
	r := answer.Response
	if r == nil || r.UID != "7e57" || !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("response %+v: want the request's UID, allowed, a JSON patch", r)
	}
	original, _ := json.Marshal(pod)
	decoded, err := jsonpatch.DecodePatch(r.Patch)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := decoded.Apply(original)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeSelector[fakeNodeLabel] != "true" || got.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("nodeSelector %v: want the fake node's beside the pod's own", got.Spec.NodeSelector)
	}
	if len(got.Spec.Tolerations) != 2 || got.Spec.Tolerations[0].Key != "node.kubernetes.io/not-ready" || got.Spec.Tolerations[1].Key != fakeNodeLabel {
		t.Errorf("tolerations %+v: want the pod's own and the fake node's", got.Spec.Tolerations)
	}

	// A pod with neither: both added.
	bare := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: pod.ObjectMeta, Spec: corev1.PodSpec{Containers: pod.Spec.Containers}}
	w = httptest.NewRecorder()
	servePodSteering(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(review(t, bare))))
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	original, _ = json.Marshal(bare)
	if decoded, err = jsonpatch.DecodePatch(answer.Response.Patch); err != nil {
		t.Fatal(err)
	}
	if patched, err = decoded.Apply(original); err != nil {
		t.Fatal(err)
	}
	got = corev1.Pod{}
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeSelector[fakeNodeLabel] != "true" || len(got.Spec.Tolerations) != 1 {
		t.Errorf("a bare pod patched to nodeSelector %v, tolerations %+v", got.Spec.NodeSelector, got.Spec.Tolerations)
	}
}

func TestServePodSteeringRefusesWhatIsNoReview(t *testing.T) {
	w := httptest.NewRecorder()
	servePodSteering(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader([]byte(`{"kind":"AdmissionReview"}`))))
	if w.Code != http.StatusBadRequest {
		t.Errorf("HTTP %d for a review without a request, want 400", w.Code)
	}
}

// The certificate is what kube-apiserver verifies the webhook by: the
// caBundle given is the root, the URL's IP the name.
func TestSelfSignedCertServesItsAddress(t *testing.T) {
	ip := net.ParseIP("127.0.0.1")
	cert, caPEM, err := selfSignedCert(ip, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	go func() { _ = srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})) }()
	defer srv.Close()

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the caBundle holds no certificate")
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("a client trusting the caBundle alone: %v", err)
	}
	resp.Body.Close()

	_, otherPEM, err := selfSignedCert(net.ParseIP("127.0.0.1"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AppendCertsFromPEM(otherPEM)
	c = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if resp, err := c.Get("https://" + ln.Addr().String() + "/"); err == nil {
		resp.Body.Close()
		t.Error("a client trusting another bundle reached the server")
	}
}
