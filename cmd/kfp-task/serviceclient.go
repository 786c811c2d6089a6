package main

// The provider-service client's I/O: the step's flags and files, and the
// HTTP call.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// serviceClient performs the calls.
type serviceClient struct {
	client     *http.Client
	retryDelay time.Duration                       // before the one retry of a refused connection
	timeout    func(kind, op string) time.Duration // of the whole call, retry included
	log        io.Writer
}

func newServiceClient() *serviceClient {
	return &serviceClient{
		client: &http.Client{
			Transport: inClusterTransport(nil),
			// A redirect is no answer of the API's; report it as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		retryDelay: 2 * time.Second,
		timeout: func(kind, op string) time.Duration {
			if kind == kindPipeline && op != opDelete {
				return compileTimeout
			}
			return serviceTimeout
		},
		log: os.Stderr,
	}
}

// serviceCmd runs KIND OPERATION against the provider service.
func serviceCmd(kind string, args []string) error {
	return newServiceClient().run(kind, args)
}

func (c *serviceClient) run(kind string, args []string) error {
	usage := fmt.Sprintf("usage: kfp-task %s create|update|delete --provider-config FILE --resource FILE --output FILE [--pipeline-definition FILE]", kind)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New(usage)
	}
	op := args[0]
	fs := flag.NewFlagSet(kind+" "+op, flag.ContinueOnError)
	configPath := fs.String("provider-config", "", "the provider config (JSON)")
	resourcePath := fs.String("resource", "", "the resource (JSON)")
	outputPath := fs.String("output", "", "where to write the outcome")
	definitionPath := fs.String("pipeline-definition", "", "the compiled pipeline (pipeline create and update)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *outputPath == "" {
		return errors.New("--output is required; " + usage)
	}
	out, callErr := c.call(kind, op, *configPath, *resourcePath, *definitionPath)
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*outputPath, data, 0o644); err != nil {
		return fmt.Errorf("writing the outcome: %w", err)
	}
	if callErr != nil {
		return callErr
	}
	if out.Error != "" {
		fmt.Fprintf(c.log, "kfp-task: %s %s failed: %s\n", kind, op, out.Error)
	}
	return nil
}

// call reads the inputs, calls the service and returns the outcome. An
// error means the service gave no verdict (unreachable, or an answer not
// of the API): the output says why too, and the step fails.
func (c *serviceClient) call(kind, op, configPath, resourcePath, definitionPath string) (contract.Output, error) {
	failed := func(format string, a ...any) (contract.Output, error) {
		return contract.Output{Error: fmt.Sprintf(format, a...)}, nil
	}
	if !isServiceKind(kind) {
		return failed("unknown kind %q (want pipeline, run, runschedule or experiment)", kind)
	}
	var cfg contract.ProviderConfig
	if err := readJSON(configPath, "--provider-config", &cfg); err != nil {
		return failed("%v", err)
	}
	var res contract.Resource
	if err := readJSON(resourcePath, "--resource", &res); err != nil {
		return failed("%v", err)
	}
	if err := contract.CheckVersion("provider", "provider-config", cfg.ContractVersion); err != nil {
		return failed("%v", err)
	}
	if err := contract.CheckVersion("provider", "resource", res.ContractVersion); err != nil {
		return failed("%v", err)
	}
	base, err := serviceBase(cfg)
	if err != nil {
		return failed("%v", err)
	}
	var compiled []byte
	if kind == kindPipeline && op != opDelete {
		if definitionPath == "" {
			return failed("pipeline %s needs --pipeline-definition (the compiled pipeline)", op)
		}
		if compiled, err = os.ReadFile(definitionPath); err != nil {
			return failed("reading the compiled pipeline definition: %v", err)
		}
	}
	method, path, body, err := serviceRequest(kind, op, res, cfg, compiled)
	if err != nil {
		return failed("%v", err)
	}
	target := base + path
	timeout := c.timeout(kind, op)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	status, answer, err := c.send(ctx, method, target, body)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the provider service did not answer %s %s within %s", method, target, timeout)
		} else {
			err = fmt.Errorf("cannot reach the provider service (%s %s): %w", method, target, err)
		}
		return contract.Output{Error: err.Error()}, err
	}
	fmt.Fprintf(c.log, "kfp-task: %s %s: HTTP %d in %s\n", method, target, status, time.Since(start).Round(time.Millisecond))
	return outputOf(kind, op, res.Status.Provider.ID, status, answer)
}

// serviceBase is the provider service's URL, without a trailing slash.
func serviceBase(cfg contract.ProviderConfig) (string, error) {
	if cfg.ServiceURL == "" {
		return "", fmt.Errorf("provider %s/%s is not a provider service: its provider config has no serviceURL. "+
			"This image (the operator's kfp-task) only calls provider services (spec.serviceImage); a CLI provider's spec.image must implement the operation itself",
			cfg.Namespace, cfg.Name)
	}
	u, err := url.Parse(cfg.ServiceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("provider %s/%s: serviceURL %q is not an http(s) URL of a service", cfg.Namespace, cfg.Name, cfg.ServiceURL)
	}
	return strings.TrimRight(cfg.ServiceURL, "/"), nil
}

func readJSON(path, flagName string, into any) error {
	if path == "" {
		return fmt.Errorf("%s is required", flagName)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	return nil
}

// send makes the call, retrying once, after retryDelay, when the
// connection is refused (the request never reached the service, so even a
// create is safe to repeat).
func (c *serviceClient) send(ctx context.Context, method, target string, body []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		var reader io.Reader = http.NoBody
		if body != nil {
			reader = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, reader)
		if err != nil {
			return 0, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", "kfp-tekton-operator-kfp-task")
		resp, err := c.client.Do(req)
		if err != nil {
			if attempt == 0 && errors.Is(err, syscall.ECONNREFUSED) {
				fmt.Fprintf(c.log, "kfp-task: %s %s: %v; retrying in %s\n", method, target, err, c.retryDelay)
				select {
				case <-time.After(c.retryDelay):
					continue
				case <-ctx.Done():
					return 0, nil, ctx.Err()
				}
			}
			return 0, nil, err
		}
		answer, err := io.ReadAll(io.LimitReader(resp.Body, maxServiceAnswer))
		resp.Body.Close()
		if err != nil {
			return 0, nil, fmt.Errorf("reading the answer (HTTP %d): %w", resp.StatusCode, err)
		}
		return resp.StatusCode, answer, nil
	}
}

// inClusterTransport is the default transport without proxies: the
// provider service and the operator's /events are in the cluster.
func inClusterTransport(tlsConfig *tls.Config) *http.Transport {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	return transport
}
