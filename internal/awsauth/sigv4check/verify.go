// SPDX-License-Identifier: Apache-2.0

package sigv4check

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	algorithm  = "AWS4-HMAC-SHA256"
	terminator = "aws4_request"
	timeFormat = "20060102T150405Z"
	dayFormat  = "20060102"

	// UnsignedPayload is the payload hash a client may sign instead of the body's when the
	// service allows it (AllowUnsignedPayload).
	UnsignedPayload = "UNSIGNED-PAYLOAD"

	// DefaultMaxSkew is how far a request's time may be from the server's clock.
	DefaultMaxSkew = 5 * time.Minute
)

// Verifier checks SigV4 signatures. The zero value refuses everything; set Secrets.
type Verifier struct {
	// Secrets maps access key IDs to secret access keys.
	Secrets map[string]string
	// Tokens maps access key IDs of temporary credentials to the session token issued with
	// them; such a key must send it in X-Amz-Security-Token, and no other key may send one.
	Tokens map[string]string
	// Service is the signing name the credential scope must name (e.g. "logs", "xray");
	// empty accepts any.
	Service string
	// Region is the Region the scope must name; empty accepts any.
	Region string
	// MaxSkew bounds the distance between the request time and Now; 0 means DefaultMaxSkew.
	MaxSkew time.Duration
	// Now is the server clock; nil means time.Now.
	Now func() time.Time
	// AllowUnsignedPayload accepts "X-Amz-Content-Sha256: UNSIGNED-PAYLOAD" (S3 does; other
	// services always hash the body, so such a signature does not match).
	AllowUnsignedPayload bool
	// SingleEncodePath uses the request path as sent in the canonical URI (S3); by default
	// each path segment is URI-encoded once more, as every other service does.
	SingleEncodePath bool
}

// Verify checks r, whose body (already read) is body. It returns the access key ID that
// signed the request, or an *Error.
func (v *Verifier) Verify(r *http.Request, body []byte) (string, error) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "", &Error{MissingAuthentication, msgMissing}
	}
	a, err := parseAuthorization(auth)
	if err != nil {
		return "", err
	}
	when, err := requestTime(r)
	if err != nil {
		return "", err
	}
	if err := v.checkScope(a, when); err != nil {
		return "", err
	}
	secret, ok := v.Secrets[a.accessKey]
	if !ok {
		return "", &Error{UnknownAccessKey, msgUnknownKey}
	}
	if want, sent := v.Tokens[a.accessKey], r.Header.Get("X-Amz-Security-Token"); want != sent {
		return "", &Error{InvalidToken, msgUnknownKey}
	}
	if err := v.checkSkew(when); err != nil {
		return "", err
	}
	payload, err := v.payloadHash(r, body)
	if err != nil {
		return "", err
	}
	creq, err := CanonicalRequest(r, a.signedHeaders, payload, !v.SingleEncodePath)
	if err != nil {
		return "", err
	}
	scope := strings.Join([]string{a.day, a.region, a.service, terminator}, "/")
	want := Signature(SigningKey(secret, a.day, a.region, a.service), StringToSign(when.Format(timeFormat), scope, creq))
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return "", &Error{SignatureMismatch, msgMismatch}
	}
	return a.accessKey, nil
}

// authorization is a parsed Authorization header.
type authorization struct {
	accessKey, day, region, service string
	signedHeaders                   []string
	signature                       string
}

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=<key>/<day>/<region>/<service>/
// aws4_request, SignedHeaders=<h1;h2>, Signature=<hex>".
func parseAuthorization(h string) (authorization, error) {
	incomplete := &Error{IncompleteSignature, msgIncomplete}
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || alg != algorithm {
		return authorization{}, incomplete
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return authorization{}, incomplete
		}
		if _, dup := params[k]; dup {
			return authorization{}, incomplete
		}
		params[k] = val
	}
	cred, sh, sig := params["Credential"], params["SignedHeaders"], params["Signature"]
	if cred == "" || sh == "" || sig == "" || len(params) != 3 {
		return authorization{}, incomplete
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" {
		return authorization{}, &Error{IncompleteSignature, fmt.Sprintf("Credential should be scoped to a valid Region, not '%s'. ", cred)}
	}
	if parts[4] != terminator {
		return authorization{}, &Error{IncompleteSignature, "Credential should be scoped with a valid terminator: 'aws4_request', not '" + parts[4] + "'."}
	}
	a := authorization{
		accessKey: parts[0], day: parts[1], region: parts[2], service: parts[3],
		signedHeaders: strings.Split(sh, ";"), signature: sig,
	}
	if !slices.Contains(a.signedHeaders, "host") {
		return authorization{}, &Error{IncompleteSignature, "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."}
	}
	return a, nil
}

// requestTime reads X-Amz-Date, or else the Date header.
func requestTime(r *http.Request) (time.Time, error) {
	if s := r.Header.Get("X-Amz-Date"); s != "" {
		t, err := time.Parse(timeFormat, s)
		if err != nil {
			return time.Time{}, &Error{IncompleteSignature, "Date must be in ISO-8601 'basic format'. Got '" + s + "'. See http://en.wikipedia.org/wiki/ISO_8601"}
		}
		return t, nil
	}
	if s := r.Header.Get("Date"); s != "" {
		t, err := http.ParseTime(s)
		if err != nil {
			return time.Time{}, &Error{IncompleteSignature, "Date header is not an HTTP date: '" + s + "'."}
		}
		return t.UTC(), nil
	}
	return time.Time{}, &Error{IncompleteSignature, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."}
}

func (v *Verifier) checkScope(a authorization, when time.Time) error {
	if a.day != when.Format(dayFormat) {
		return &Error{SignatureMismatch, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + a.day + "' != '" + when.Format(dayFormat) + "', from '" + when.Format(timeFormat) + "'."}
	}
	if v.Region != "" && a.region != v.Region {
		return &Error{SignatureMismatch, "Credential should be scoped to a valid region. "}
	}
	if v.Service != "" && a.service != v.Service {
		return &Error{SignatureMismatch, "Credential should be scoped to correct service: '" + v.Service + "'. "}
	}
	return nil
}

func (v *Verifier) checkSkew(when time.Time) error {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	skew := v.MaxSkew
	if skew <= 0 {
		skew = DefaultMaxSkew
	}
	t := now().UTC()
	mins := int(skew / time.Minute)
	switch {
	case when.Before(t.Add(-skew)):
		return &Error{SignatureExpired, fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - %d min.)",
			when.Format(timeFormat), t.Add(-skew).Format(timeFormat), t.Format(timeFormat), mins)}
	case when.After(t.Add(skew)):
		return &Error{SignatureExpired, fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + %d min.)",
			when.Format(timeFormat), t.Add(skew).Format(timeFormat), t.Format(timeFormat), mins)}
	}
	return nil
}

// payloadHash is the last line of the canonical request: the hex SHA-256 of the body, or
// UNSIGNED-PAYLOAD where allowed. A hex X-Amz-Content-Sha256 must match the body.
func (v *Verifier) payloadHash(r *http.Request, body []byte) (string, error) {
	sum := sha256.Sum256(body)
	actual := hex.EncodeToString(sum[:])
	declared := r.Header.Get("X-Amz-Content-Sha256")
	switch {
	case declared == "":
		return actual, nil
	case declared == UnsignedPayload:
		if v.AllowUnsignedPayload {
			return UnsignedPayload, nil
		}
		return actual, nil
	case strings.HasPrefix(declared, "STREAMING-"):
		return "", &Error{IncompleteSignature, "chunked (" + declared + ") payload signing is not supported by this server."}
	case !strings.EqualFold(declared, actual):
		return "", &Error{ContentSHA256Mismatch, msgContentHash}
	}
	return actual, nil
}

// CanonicalRequest builds the canonical request of r with the given signed headers (lower
// case, in the order signed) and payload hash. doubleEncode encodes the (already escaped)
// path once more, as every service but S3 does.
func CanonicalRequest(r *http.Request, signedHeaders []string, payloadHash string, doubleEncode bool) (string, error) {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if r.URL.Opaque != "" {
		path = r.URL.Opaque
	}
	if path == "" {
		path = "/"
	}
	if doubleEncode {
		path = uriEncode(path, false)
	}
	b.WriteString(path)
	b.WriteByte('\n')
	q, err := canonicalQuery(r.URL.RawQuery)
	if err != nil {
		return "", err
	}
	b.WriteString(q)
	b.WriteByte('\n')
	for _, name := range signedHeaders {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(headerValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String(), nil
}

// headerValue is the canonical value of one signed header: its values trimmed, runs of
// spaces made one, joined by commas. Go moves Host and Content-Length out of the header map.
func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		if r.Host != "" {
			return r.Host
		}
		return r.URL.Host
	case "content-length":
		if v := r.Header.Get("Content-Length"); v != "" {
			return strings.TrimSpace(v)
		}
		if r.ContentLength >= 0 {
			return strconv.FormatInt(r.ContentLength, 10)
		}
	}
	vals := r.Header.Values(name)
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalQuery sorts the parameters by name, then value, each URI-encoded.
func canonicalQuery(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	type kv struct{ k, v string }
	var pairs []kv
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, val, _ := strings.Cut(p, "=")
		uk, err1 := url.QueryUnescape(k)
		uv, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return "", &Error{SignatureMismatch, msgMismatch}
		}
		pairs = append(pairs, kv{uriEncode(uk, true), uriEncode(uv, true)})
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&"), nil
}

// uriEncode percent-encodes every byte but the unreserved characters (A-Z a-z 0-9 - _ . ~),
// and '/' too unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexdig[c>>4])
			b.WriteByte(hexdig[c&15])
		}
	}
	return b.String()
}

// StringToSign builds the string to sign from the request time (ISO-8601 basic), the
// credential scope and the canonical request.
func StringToSign(amzDate, scope, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// SigningKey derives the signing key: HMAC chain over day, Region, service and terminator,
// keyed first by "AWS4" + secret.
func SigningKey(secret, day, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), day)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, terminator)
}

// Signature is the hex HMAC-SHA256 of the string to sign under the signing key.
func Signature(key []byte, stringToSign string) string {
	return hex.EncodeToString(hmacSHA256(key, stringToSign))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
