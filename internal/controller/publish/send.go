package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"

	"github.com/cloudevents/sdk-go/v2/binding"
	ceclient "github.com/cloudevents/sdk-go/v2/client"
	cecontext "github.com/cloudevents/sdk-go/v2/context"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
)

// ResourceExtension is the CloudEvent extension attribute naming the
// resource whose outbox held the event ("Run namespace/name").
const ResourceExtension = "kfpresource"

// cloudEvent is the CloudEvent of a pending event of resource. Its data
// are the stored bytes themselves: re-encoding them could change what the
// sink receives (escaping, key order, whitespace).
func cloudEvent(ev pipelinesv1beta1.PendingCompletionEvent, resource string) event.Event {
	ce := event.New(event.CloudEventsVersionV1)
	ce.SetID(ev.ID)
	ce.SetSource(ev.Source)
	ce.SetType(runcompletion.EventType)
	ce.SetTime(ev.Time.Time)
	ce.SetExtension(ResourceExtension, resource)
	ce.SetDataContentType(event.ApplicationJSON)
	ce.DataEncoded = []byte(ev.Data)
	return ce
}

// sender posts CloudEvents in binary mode (attributes in ce- headers, the
// data as the body).
type sender struct{ client ceclient.Client }

func newSender(hc *http.Client) (*sender, error) {
	p, err := cehttp.New(cehttp.WithClient(*hc))
	if err != nil {
		return nil, err
	}
	c, err := ceclient.New(p)
	if err != nil {
		return nil, err
	}
	return &sender{client: c}, nil
}

// send posts ce to url; only a 2xx answer is a delivery. The error leaves
// the URL out: it may hold a credential, and errors reach conditions that
// the resource's readers see.
func (s *sender) send(ctx context.Context, url string, ce event.Event) error {
	ctx = binding.WithForceBinary(cecontext.WithTarget(ctx, url))
	result := s.client.Send(ctx, ce)
	if protocol.IsACK(result) {
		return nil
	}
	var answer *cehttp.Result
	if errors.As(result, &answer) {
		return fmt.Errorf("sink answered HTTP %w", answer) // "503: body"
	}
	var transport *neturl.Error
	if errors.As(result, &transport) {
		return fmt.Errorf("POST failed: %w", transport.Err)
	}
	return result
}
