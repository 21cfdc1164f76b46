// SPDX-License-Identifier: Apache-2.0

// Package podpath extracts Kubernetes pod and container metadata from the path of a container
// log file, for the three layouts kubelet has used.
package podpath

import (
	"strconv"
	"strings"
)

// Meta is what a log file path tells about its container. Empty strings mean "not in the path";
// RestartCount is -1 when unknown.
type Meta struct {
	Namespace     string
	PodName       string
	PodUID        string
	ContainerName string
	ContainerID   string
	RestartCount  int
}

// Parse recognizes, by their last path elements:
//
//	.../<namespace>_<pod>_<uid>/<container>/<restart>.log   (current /var/log/pods layout)
//	.../<uid>/<container>_<restart>.log                     (older /var/log/pods layout)
//	.../<pod>_<namespace>_<container>-<container id>.log    (/var/log/containers links)
//
// A rotated name such as "0.log.20240101-120000" is read as its original "0.log". Parse reports
// false for any other shape.
func Parse(path string) (Meta, bool) {
	path = strings.ReplaceAll(path, "\\", "/")
	base, dir := lastElem(path)
	base = stripRotation(base)
	name, ok := strings.CutSuffix(base, ".log")
	if !ok || name == "" {
		return Meta{RestartCount: -1}, false
	}
	if n, ok := restartNumber(name); ok {
		container, dir2 := lastElem(dir)
		podDir, _ := lastElem(dir2)
		ns, pod, uid, ok := split3(podDir)
		if ok && container != "" {
			return Meta{Namespace: ns, PodName: pod, PodUID: uid, ContainerName: container, RestartCount: n}, true
		}
		return Meta{RestartCount: -1}, false
	}
	// <container>_<n>.log under <uid>/
	if i := strings.LastIndexByte(name, '_'); i > 0 && strings.IndexByte(name[:i], '_') < 0 {
		if n, ok := restartNumber(name[i+1:]); ok {
			uid, _ := lastElem(dir)
			if uid != "" && !strings.Contains(uid, "_") {
				return Meta{PodUID: uid, ContainerName: name[:i], RestartCount: n}, true
			}
		}
	}
	// <pod>_<namespace>_<container>-<id>.log
	if pod, ns, rest, ok := split3(name); ok {
		if i := strings.LastIndexByte(rest, '-'); i > 0 && isHex(rest[i+1:]) {
			return Meta{Namespace: ns, PodName: pod, ContainerName: rest[:i], ContainerID: rest[i+1:], RestartCount: -1}, true
		}
	}
	return Meta{RestartCount: -1}, false
}

// stripRotation removes a kubelet rotation suffix: "0.log.20240101-120000" -> "0.log".
func stripRotation(base string) string {
	i := strings.LastIndex(base, ".log.")
	if i < 0 {
		return base
	}
	suffix := base[i+5:]
	if len(suffix) == 15 && suffix[8] == '-' && isDigits(suffix[:8]) && isDigits(suffix[9:]) {
		return base[:i+4]
	}
	return base
}

// IsRotated reports whether base is the name of a rotated or compressed log file that must
// never be read as a new file: a ".gz" (or other compressed) file, or a kubelet rotation suffix.
func IsRotated(base string) bool {
	for _, ext := range []string{".gz", ".zst", ".bz2", ".xz", ".tmp"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return stripRotation(base) != base
}

func lastElem(p string) (elem, dir string) {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return p, ""
	}
	return p[i+1:], p[:i]
}

func split3(s string) (a, b, c string, ok bool) {
	i := strings.IndexByte(s, '_')
	if i <= 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(s[i+1:], '_')
	if j <= 0 {
		return "", "", "", false
	}
	j += i + 1
	if j+1 >= len(s) || strings.IndexByte(s[j+1:], '_') >= 0 {
		return "", "", "", false
	}
	return s[:i], s[i+1 : j], s[j+1:], true
}

func restartNumber(s string) (int, bool) {
	if !isDigits(s) || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	if len(s) < 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
