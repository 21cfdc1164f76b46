// SPDX-License-Identifier: Apache-2.0

package sigv4check

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The AWS SigV4 test suite's key, Region, service and time.
const (
	suiteKey    = "AKIDEXAMPLE"
	suiteSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	suiteTime   = "20150830T123600Z"
	suiteScope  = suiteKey + "/20150830/us-east-1/service/aws4_request"
)

func suiteNow() time.Time {
	t, _ := time.Parse(timeFormat, suiteTime)
	return t
}

type vector struct {
	name          string
	method, url   string
	headers       [][2]string
	body          string
	scope         string
	signedHeaders string
	signature     string
	secret        string
	now           string
	s3            bool
}

// vectors are published examples: the AWS SigV4 test suite (get-vanilla, post-vanilla,
// get-vanilla-query-order-key-case, post-x-www-form-urlencoded) and the
// S3 GET Object example of the S3 API reference, with their expected signatures.
var vectors = []vector{
	{
		name: "get-vanilla", method: "GET", url: "https://example.amazonaws.com/",
		headers: [][2]string{{"X-Amz-Date", suiteTime}}, scope: suiteScope, signedHeaders: "host;x-amz-date",
		signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
	},
	{
		name: "post-vanilla", method: "POST", url: "https://example.amazonaws.com/",
		headers: [][2]string{{"X-Amz-Date", suiteTime}}, scope: suiteScope, signedHeaders: "host;x-amz-date",
		signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
	},
	{
		name: "get-vanilla-query-order-key-case", method: "GET", url: "https://example.amazonaws.com/?Param2=value2&Param1=value1",
		headers: [][2]string{{"X-Amz-Date", suiteTime}}, scope: suiteScope, signedHeaders: "host;x-amz-date",
		signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
	},
	{
		name: "post-x-www-form-urlencoded", method: "POST", url: "https://example.amazonaws.com/",
		headers:       [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Amz-Date", suiteTime}},
		body:          "Param1=value1",
		scope:         suiteScope,
		signedHeaders: "content-type;host;x-amz-date",
		signature:     "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
	},
	{
		name: "s3-get-object", method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt",
		headers: [][2]string{
			{"Range", "bytes=0-9"},
			{"X-Amz-Content-Sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
			{"X-Amz-Date", "20130524T000000Z"},
		},
		scope:         "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
		signedHeaders: "host;range;x-amz-content-sha256;x-amz-date",
		signature:     "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		secret:        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		now:           "20130524T000000Z",
		s3:            true,
	},
}

func (vc vector) request(t testing.TB, signature string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(vc.method, vc.url, strings.NewReader(vc.body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Del("Content-Length")
	for _, h := range vc.headers {
		r.Header.Add(h[0], h[1])
	}
	r.Header.Set("Authorization", algorithm+" Credential="+vc.scope+", SignedHeaders="+vc.signedHeaders+", Signature="+signature)
	return r
}

func (vc vector) verifier() *Verifier {
	key, _, _ := strings.Cut(vc.scope, "/")
	secret := vc.secret
	if secret == "" {
		secret = suiteSecret
	}
	now := vc.now
	if now == "" {
		now = suiteTime
	}
	t, _ := time.Parse(timeFormat, now)
	return &Verifier{
		Secrets:              map[string]string{key: secret},
		Now:                  func() time.Time { return t },
		SingleEncodePath:     vc.s3,
		AllowUnsignedPayload: vc.s3,
	}
}

func TestPublishedVectors(t *testing.T) {
	for _, vc := range vectors {
		t.Run(vc.name, func(t *testing.T) {
			key, err := vc.verifier().Verify(vc.request(t, vc.signature), []byte(vc.body))
			if err != nil {
				t.Fatalf("published signature refused: %v", err)
			}
			if !strings.HasPrefix(vc.scope, key+"/") {
				t.Fatalf("key %q", key)
			}
			// One hex digit off is refused.
			bad := []byte(vc.signature)
			bad[len(bad)-1] ^= 1
			_, err = vc.verifier().Verify(vc.request(t, string(bad)), []byte(vc.body))
			assertKind(t, err, SignatureMismatch)
		})
	}
}

// TestSigningKey: the signing key of the IAM user guide's derivation example.
func TestSigningKey(t *testing.T) {
	k := SigningKey(suiteSecret, "20150830", "us-east-1", "iam")
	if want := "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"; hex.EncodeToString(k) != want {
		t.Fatalf("signing key %s, want %s", hex.EncodeToString(k), want)
	}
}

// TestRefusals: each malformed or wrong request is refused with its kind.
func TestRefusals(t *testing.T) {
	get := vectors[0]
	sig := get.signature
	ok := func(mut func(r *http.Request, v *Verifier)) func(t *testing.T) error {
		return func(t *testing.T) error {
			r, v := get.request(t, sig), get.verifier()
			mut(r, v)
			_, err := v.Verify(r, nil)
			return err
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T) error
		want Kind
	}{
		{"no authorization", ok(func(r *http.Request, _ *Verifier) { r.Header.Del("Authorization") }), MissingAuthentication},
		{"bearer", ok(func(r *http.Request, _ *Verifier) { r.Header.Set("Authorization", "Bearer abc") }), IncompleteSignature},
		{"no signature", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("Authorization", algorithm+" Credential="+suiteScope+", SignedHeaders=host;x-amz-date")
		}), IncompleteSignature},
		{"short scope", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("Authorization", algorithm+" Credential=AKIDEXAMPLE/20150830/us-east-1, SignedHeaders=host;x-amz-date, Signature="+sig)
		}), IncompleteSignature},
		{"host not signed", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("Authorization", algorithm+" Credential="+suiteScope+", SignedHeaders=x-amz-date, Signature="+sig)
		}), IncompleteSignature},
		{"no date", ok(func(r *http.Request, _ *Verifier) { r.Header.Del("X-Amz-Date") }), IncompleteSignature},
		{"bad date", ok(func(r *http.Request, _ *Verifier) { r.Header.Set("X-Amz-Date", "2015-08-30") }), IncompleteSignature},
		{"unknown key", ok(func(_ *http.Request, v *Verifier) { v.Secrets = map[string]string{"OTHER": suiteSecret} }), UnknownAccessKey},
		{"wrong secret", ok(func(_ *http.Request, v *Verifier) { v.Secrets[suiteKey] = "wrong" }), SignatureMismatch},
		{"wrong service", ok(func(_ *http.Request, v *Verifier) { v.Service = "xray" }), SignatureMismatch},
		{"wrong region", ok(func(_ *http.Request, v *Verifier) { v.Region = "eu-west-1" }), SignatureMismatch},
		{"scope day differs", ok(func(r *http.Request, _ *Verifier) { r.Header.Set("X-Amz-Date", "20150831T000000Z") }), SignatureMismatch},
		{"expired", ok(func(_ *http.Request, v *Verifier) {
			v.Now = func() time.Time { return suiteNow().Add(6 * time.Minute) }
		}), SignatureExpired},
		{"not yet current", ok(func(_ *http.Request, v *Verifier) {
			v.Now = func() time.Time { return suiteNow().Add(-6 * time.Minute) }
		}), SignatureExpired},
		{"token required", ok(func(_ *http.Request, v *Verifier) { v.Tokens = map[string]string{suiteKey: "tok"} }), InvalidToken},
		{"token wrong", ok(func(r *http.Request, v *Verifier) {
			v.Tokens = map[string]string{suiteKey: "tok"}
			r.Header.Set("X-Amz-Security-Token", "other")
		}), InvalidToken},
		{"token with a long-term key", ok(func(r *http.Request, _ *Verifier) { r.Header.Set("X-Amz-Security-Token", "tok") }), InvalidToken},
		{"content hash differs", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64))
		}), ContentSHA256Mismatch},
		{"streaming", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
		}), IncompleteSignature},
		{"extra signed header not sent", ok(func(r *http.Request, _ *Verifier) {
			r.Header.Set("Authorization", algorithm+" Credential="+suiteScope+", SignedHeaders=host;x-amz-date;x-extra, Signature="+sig)
		}), SignatureMismatch},
		{"tampered query", ok(func(r *http.Request, _ *Verifier) { r.URL.RawQuery = "a=b" }), SignatureMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assertKind(t, tc.run(t), tc.want) })
	}
	t.Run("tampered body", func(t *testing.T) {
		post := vectors[3]
		_, err := post.verifier().Verify(post.request(t, post.signature), []byte("Param1=value2"))
		assertKind(t, err, SignatureMismatch)
	})
}

// TestUnsignedPayload: UNSIGNED-PAYLOAD is accepted only where the service allows it; a
// service that hashes the body refuses a signature over the literal.
func TestUnsignedPayload(t *testing.T) {
	s3 := vectors[4]
	body := []byte("anything")
	r := s3.request(t, "x")
	r.Header.Set("X-Amz-Content-Sha256", UnsignedPayload)
	creq, err := CanonicalRequest(r, strings.Split(s3.signedHeaders, ";"), UnsignedPayload, false)
	if err != nil {
		t.Fatal(err)
	}
	sig := Signature(SigningKey(s3.secret, "20130524", "us-east-1", "s3"), StringToSign("20130524T000000Z", "20130524/us-east-1/s3/aws4_request", creq))
	r.Header.Set("Authorization", algorithm+" Credential="+s3.scope+", SignedHeaders="+s3.signedHeaders+", Signature="+sig)
	v := s3.verifier()
	if _, err := v.Verify(r, body); err != nil {
		t.Fatalf("allowed UNSIGNED-PAYLOAD refused: %v", err)
	}
	v.AllowUnsignedPayload = false
	_, err = v.Verify(r, body)
	assertKind(t, err, SignatureMismatch)
}

func TestCodesAndStatuses(t *testing.T) {
	tests := []struct {
		kind   Kind
		p      Protocol
		code   string
		status int
	}{
		{MissingAuthentication, AWSJSON, "MissingAuthenticationTokenException", 400},
		{IncompleteSignature, AWSJSON, "IncompleteSignatureException", 400},
		{UnknownAccessKey, AWSJSON, "UnrecognizedClientException", 400},
		{InvalidToken, AWSJSON, "UnrecognizedClientException", 400},
		{SignatureMismatch, AWSJSON, "InvalidSignatureException", 400},
		{SignatureExpired, AWSJSON, "InvalidSignatureException", 400},
		{SignatureMismatch, RESTJSON, "InvalidSignatureException", 403},
		{UnknownAccessKey, RESTJSON, "UnrecognizedClientException", 403},
		{MissingAuthentication, RESTJSON, "MissingAuthenticationTokenException", 403},
		{SignatureMismatch, Query, "SignatureDoesNotMatch", 403},
		{UnknownAccessKey, Query, "InvalidClientTokenId", 403},
		{IncompleteSignature, Query, "IncompleteSignature", 400},
	}
	for _, tc := range tests {
		e := &Error{Kind: tc.kind}
		if e.Code(tc.p) != tc.code || e.Status(tc.p) != tc.status {
			t.Errorf("kind %d protocol %d: %s %d, want %s %d", tc.kind, tc.p, e.Code(tc.p), e.Status(tc.p), tc.code, tc.status)
		}
	}
}

func assertKind(t *testing.T, err error, want Kind) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want kind %d", err, want)
	}
	if e.Kind != want {
		t.Fatalf("kind %d (%s), want %d", e.Kind, e.Message, want)
	}
}
