package contract

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParamRoundTrip: every byte string survives EncodeParam/DecodeParam,
// and the encoded value holds nothing Tekton or the kubelet substitute.
func FuzzParamRoundTrip(f *testing.F) {
	for _, s := range []string{
		"", `{}`, `{"value":"pa$$word"}`, `$(params.resource)`, `$(KFP_RESOURCE)`, "base64:", "base64:e30=",
		"\x00\xff\xfe", "żółć 日本 🚀", strings.Repeat("$", 100), "{\"a\":\"\\u0000\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		encoded := EncodeParam(data)
		if !strings.HasPrefix(encoded, EncodedPrefix) || strings.ContainsAny(encoded, "$()") {
			t.Fatalf("EncodeParam(%q) = %q: want %q then base64 only", data, encoded, EncodedPrefix)
		}
		decoded, err := DecodeParam(encoded)
		if err != nil {
			t.Fatalf("DecodeParam(EncodeParam(%q)): %v", data, err)
		}
		if !bytes.Equal(decoded, data) {
			t.Fatalf("round trip of %q gave %q", data, decoded)
		}
	})
}

// FuzzDecodeParam: any value decodes to an error or to data: the value
// itself without the prefix, and with it at most what its base64 holds.
func FuzzDecodeParam(f *testing.F) {
	for _, s := range []string{
		"", `{"legacy":true}`, "base64:", "base64:e30=", "base64:e30", "base64:!!!!", "base64:e30=\n",
		"base64:====", "base64:e3=0", "BASE64:e30=", "base64:base64:e30=", " base64:e30=", "base64:\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		data, err := DecodeParam(value)
		encoded, prefixed := strings.CutPrefix(value, EncodedPrefix)
		switch {
		case !prefixed:
			if err != nil || string(data) != value {
				t.Fatalf("plain %q: got %q, %v; want the value itself", value, data, err)
			}
		case err != nil:
			if data != nil {
				t.Fatalf("%q: data %q beside error %v", value, data, err)
			}
		default:
			// The decoder is lenient (line breaks, non-zero padding bits);
			// what it returns survives the operator's own encoding.
			again, err := DecodeParam(EncodeParam(data))
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("%q decoded to %q, which does not round trip: %q, %v", value, data, again, err)
			}
			if len(data) > len(encoded)*3/4 {
				t.Fatalf("%q decoded to %d bytes, more than base64 of %d characters holds", value, len(data), len(encoded))
			}
		}
	})
}
