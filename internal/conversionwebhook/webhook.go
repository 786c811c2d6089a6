// Package conversionwebhook serves the CRDs' conversion webhook (older
// API versions such as kfp-operator's v1alpha6 to and from the storage
// version v1beta1), with a certificate the operator issues and rotates
// itself (open-policy-agent/cert-controller): a CA and a serving
// certificate in a Secret of the operator's namespace, the CA bundle
// injected into each CRD's conversion webhook. Every replica serves; the
// webhook starts once the Secret's certificate is mounted in CertDir.
// Other webhooks of the operator (internal/finalizerwebhook) are served by
// the same server, with the same certificate.
package conversionwebhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	conversionapi "sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// Path is where the API server posts ConversionReviews.
const Path = "/convert"

// Options say where the webhook is served and reached.
type Options struct {
	// Namespace is the operator's: its Service and certificate Secret are there.
	Namespace string
	// Service is the name of the Service in front of the webhook (port 443).
	Service string
	// Secret holds the CA and the serving certificate; the chart creates it
	// empty and mounts it at CertDir.
	Secret string
	// CertDir is where the Secret is mounted (tls.crt, tls.key).
	CertDir string
	// Port the webhook listens on.
	Port int
	// CRDs are the names of the CRDs served by the webhook.
	CRDs []string
	// Handlers are other webhooks served beside the conversion, by path.
	Handlers map[string]http.Handler
	// MutatingConfigurations name the MutatingWebhookConfigurations calling
	// Handlers: the rotator keeps their CA bundle current.
	MutatingConfigurations []string
}

// Add runs the certificate rotator, the webhook server (once the
// certificate is mounted) and the keeper of the CRDs' conversion settings
// in mgr, and a readiness check that passes once the webhook serves.
func Add(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" || o.Service == "" || o.Secret == "" || o.CertDir == "" || o.Port <= 0 {
		return fmt.Errorf("the conversion webhook needs a namespace, a service, a secret, a certificate directory and a port; got %+v", o)
	}
	ready := make(chan struct{})
	var webhooks []rotator.WebhookInfo
	for _, crd := range o.CRDs {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: crd, Type: rotator.CRDConversion})
	}
	for _, name := range o.MutatingConfigurations {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: name, Type: rotator.Mutating})
	}
	host := o.Service + "." + o.Namespace + ".svc"
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.Namespace, Name: o.Secret},
		CertDir:        o.CertDir,
		CAName:         "kfp-tekton-operator-webhook-ca",
		CAOrganization: "kfp-tekton-operator",
		DNSName:        host,
		ExtraDNSNames:  []string{host + ".cluster.local"},
		IsReady:        ready,
		Webhooks:       webhooks,
		FieldOwner:     "kfp-tekton-operator",
		// Every replica serves the webhook, so every replica keeps its
		// certificate current.
		RequireLeaderElection: false,
	}); err != nil {
		return fmt.Errorf("the conversion webhook's certificate rotator: %w", err)
	}
	srv := &server{ready: ready, server: webhook.NewServer(webhook.Options{Port: o.Port, CertDir: o.CertDir})}
	srv.server.Register(Path, conversion.NewWebhookHandler(mgr.GetScheme(), conversion.NewRegistry()))
	for path, h := range o.Handlers {
		srv.server.Register(path, h)
	}
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := mgr.Add(&settings{reader: mgr.GetAPIReader(), client: mgr.GetClient(), crds: o.CRDs, service: Service(o.Namespace, o.Service)}); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("conversion-webhook", srv.check)
}

// server starts the webhook server once the certificate is there (it
// reads the files when it starts).
type server struct {
	ready   <-chan struct{}
	server  webhook.Server
	serving atomic.Bool
}

func (s *server) NeedLeaderElection() bool { return false }

func (s *server) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-s.ready:
	}
	s.serving.Store(true)
	return s.server.Start(ctx)
}

func (s *server) check(req *http.Request) error {
	if !s.serving.Load() {
		return fmt.Errorf("the conversion webhook waits for its certificate")
	}
	return s.server.StartedChecker()(req)
}

var _ healthz.Checker = (&server{}).check

// CRDs names the CRDs of the kinds gv serves in scheme (each a
// conversion spoke: the webhook converts them to and from the hub).
func CRDs(scheme *runtime.Scheme, gv schema.GroupVersion) []string {
	var names []string
	for kind := range scheme.KnownTypes(gv) {
		if strings.HasSuffix(kind, "List") {
			continue
		}
		obj, err := scheme.New(gv.WithKind(kind))
		if err != nil {
			continue
		}
		if _, spoke := obj.(conversionapi.Convertible); spoke {
			names = append(names, strings.ToLower(kind)+"s."+gv.Group)
		}
	}
	slices.Sort(names)
	return names
}

// Service is the conversion webhook's service reference.
func Service(namespace, name string) *apiextensionsv1.ServiceReference {
	return &apiextensionsv1.ServiceReference{Namespace: namespace, Name: name, Path: ptr.To(Path), Port: ptr.To[int32](443)}
}

// Conversion is the conversion settings of a CRD served by the webhook
// behind service, keeping caBundle (what the rotator injected).
func Conversion(service *apiextensionsv1.ServiceReference, caBundle []byte) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: service, CABundle: caBundle},
		},
	}
}

// settings points each CRD's conversion webhook at this operator's
// Service once at start: the CRDs as generated name the chart's default
// namespace, and an operator installed in another must still be reached.
type settings struct {
	// reader reads the CRDs once, uncached: no informer over every CRD of
	// the cluster for six reads.
	reader  client.Reader
	client  client.Client
	crds    []string
	service *apiextensionsv1.ServiceReference
}

func (s *settings) NeedLeaderElection() bool { return true }

func (s *settings) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("conversion-webhook")
	for _, name := range s.crds {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := s.reader.Get(ctx, types.NamespacedName{Name: name}, &crd); err != nil {
			return fmt.Errorf("reading CRD %s to point its conversion webhook at %s/%s: %w", name, s.service.Namespace, s.service.Name, err)
		}
		var caBundle []byte
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil {
			if equality.Semantic.DeepEqual(c.Webhook.ClientConfig.Service, s.service) {
				continue
			}
			caBundle = c.Webhook.ClientConfig.CABundle
		}
		patch := client.MergeFrom(crd.DeepCopy())
		crd.Spec.Conversion = Conversion(s.service, caBundle)
		if err := s.client.Patch(ctx, &crd, patch); err != nil {
			return fmt.Errorf("pointing CRD %s's conversion webhook at %s/%s: %w", name, s.service.Namespace, s.service.Name, err)
		}
		log.Info("conversion webhook set", "crd", name, "service", s.service.Namespace+"/"+s.service.Name)
	}
	return nil
}
