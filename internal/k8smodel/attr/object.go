// SPDX-License-Identifier: Apache-2.0

package attr

// Object attributes: the Kubernetes object a record is about (its subject), as opposed to the
// resource's k8s.* attributes, which say where the record came from. object_ref writes them for
// a log line's subject, kube_events for an Event's regarding object; both through package objref,
// so the same object gets the same attributes from either.
const (
	ObjectKind            = Prefix + "object.kind"
	ObjectAPIVersion      = Prefix + "object.api_version"
	ObjectNamespace       = Prefix + "object.namespace"
	ObjectName            = Prefix + "object.name"
	ObjectUID             = Prefix + "object.uid"
	ObjectFieldPath       = Prefix + "object.field_path"
	ObjectResourceVersion = Prefix + "object.resource_version"
	// ObjectRefs lists every other object a record names, each as objref's canonical key
	// (Kind[.group]/[namespace/]name).
	ObjectRefs = Prefix + "object.refs"

	// Related* are an Event's related object (the second object an event names).
	RelatedKind       = Prefix + "related.kind"
	RelatedAPIVersion = Prefix + "related.api_version"
	RelatedNamespace  = Prefix + "related.namespace"
	RelatedName       = Prefix + "related.name"
	RelatedUID        = Prefix + "related.uid"
	RelatedFieldPath  = Prefix + "related.field_path"
)

// ObjectSet is the attribute names of one object role (subject or related).
type ObjectSet struct {
	Kind, APIVersion, Namespace, Name, UID, FieldPath, ResourceVersion string
}

// Subject is the attribute set of a record's subject.
var Subject = ObjectSet{
	Kind: ObjectKind, APIVersion: ObjectAPIVersion, Namespace: ObjectNamespace, Name: ObjectName,
	UID: ObjectUID, FieldPath: ObjectFieldPath, ResourceVersion: ObjectResourceVersion,
}

// Related is the attribute set of an Event's related object.
var Related = ObjectSet{
	Kind: RelatedKind, APIVersion: RelatedAPIVersion, Namespace: RelatedNamespace, Name: RelatedName,
	UID: RelatedUID, FieldPath: RelatedFieldPath,
}

// Names returns the set's non-empty names.
func (s ObjectSet) Names() []string {
	out := make([]string, 0, 7)
	for _, n := range []string{s.Kind, s.APIVersion, s.Namespace, s.Name, s.UID, s.FieldPath, s.ResourceVersion} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

func init() {
	writers := []string{"object_ref", "kube_events"}
	docs := map[string]string{
		ObjectKind:            "kind of the object the record is about (Pod, Service, ...)",
		ObjectAPIVersion:      "its group/version (v1, apps/v1, serving.knative.dev/v1)",
		ObjectNamespace:       "its namespace; absent for cluster-scoped objects",
		ObjectName:            "its name",
		ObjectUID:             "its uid, when the record states one",
		ObjectFieldPath:       "the part of the object an event is about (spec.containers{app})",
		ObjectResourceVersion: "the object's resourceVersion an event refers to",
		RelatedKind:           "kind of an Event's related object",
		RelatedAPIVersion:     "its group/version",
		RelatedNamespace:      "its namespace",
		RelatedName:           "its name",
		RelatedUID:            "its uid",
		RelatedFieldPath:      "its field path",
	}
	for name, doc := range docs {
		register(Entry{Name: name, Origin: Own, Place: Record, Type: "string", Writers: writers, Doc: doc})
	}
	register(Entry{
		Name: ObjectRefs, Origin: Own, Place: Record, Type: "slice", Writers: []string{"object_ref"},
		Doc: "every other object the record names, as Kind[.group]/[namespace/]name strings",
	})
}
