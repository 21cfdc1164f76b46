// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestShippedQueueStorageLocalized: the shipped exporter queue is in queue_storage, whose
// directory moves into the test's state directory under its shipped last element.
func TestShippedQueueStorageLocalized(t *testing.T) {
	dir := t.TempDir()
	l := localForTest(dir)
	_, got := loadShipped(t, l)
	want := shippedSection(t)
	if v := dig(want, "exporters", "cloudwatch_groups", "sending_queue", "storage"); v != "queue_storage" {
		t.Fatalf("the shipped exporter queue is in %v, not queue_storage", v)
	}
	shippedDir, _ := dig(want, "extensions", "queue_storage", "directory").(string)
	if shippedDir == "" {
		t.Fatal("the shipped queue_storage has no directory")
	}
	if v := dig(got, "extensions", "queue_storage", "directory"); v != filepath.Join(l.StateDir, filepath.Base(shippedDir)) {
		t.Errorf("queue_storage directory = %v, want %s in the state directory", v, filepath.Base(shippedDir))
	}
	if v := dig(got, "extensions", "queue_storage", "import_file_storage"); v != l.StateDir {
		t.Errorf("queue_storage import_file_storage = %v, want file_storage's directory", v)
	}
	if v := dig(got, "extensions", "file_storage", "directory"); v != l.StateDir {
		t.Errorf("file_storage directory = %v", v)
	}
}

func TestSetQueueStorage(t *testing.T) {
	for _, c := range []struct {
		storage string
		// added is the directory of an extension the configuration lacked ("" when it had it).
		added   string
		wantErr bool
	}{
		{storage: "file_storage"},
		{storage: "queue_storage"},
		{storage: "queue_storage/other", added: "queue_storage"},
		{storage: "file_storage/other", added: "."},
		{storage: "memory"},
		{storage: "in_memory", wantErr: true},
		{storage: "queue_storagex", wantErr: true},
	} {
		t.Run(c.storage, func(t *testing.T) {
			dir := t.TempDir()
			l := localForTest(dir)
			s, before := loadShipped(t, l)
			err := s.SetQueueStorage(c.storage, l.StateDir)
			got := afterEdit(t, s, err, c.wantErr)
			if got == nil {
				return
			}
			if c.storage == MemoryQueue {
				q := dig(got, "exporters", "cloudwatch_groups", "sending_queue").(map[string]any)
				if v, ok := q["storage"]; ok {
					t.Errorf("sending_queue storage = %v, want none", v)
				}
				if q["queue_size"] != dig(before, "exporters", "cloudwatch_groups", "sending_queue", "queue_size") {
					t.Errorf("queue_size changed: %v", q["queue_size"])
				}
				return
			}
			if v := dig(got, "exporters", "cloudwatch_groups", "sending_queue", "storage"); v != c.storage {
				t.Errorf("sending_queue storage = %v", v)
			}
			listed := dig(got, "service", "extensions").([]any)
			if !slices.Contains(listed, any(c.storage)) {
				t.Errorf("service extensions %v lack %s", listed, c.storage)
			}
			if c.added == "" {
				if !slices.Equal(listed, dig(before, "service", "extensions").([]any)) {
					t.Errorf("service extensions changed: %v", listed)
				}
				return
			}
			if v := dig(got, "extensions", c.storage, "directory"); v != filepath.Join(l.StateDir, c.added) {
				t.Errorf("added %s directory = %v", c.storage, v)
			}
		})
	}
}

func TestSetQueueSize(t *testing.T) {
	s, _ := loadShipped(t, localForTest(t.TempDir()))
	got := afterEdit(t, s, s.SetQueueSize(4<<20), false)
	if v := dig(got, "exporters", "cloudwatch_groups", "sending_queue", "queue_size"); v != 4<<20 {
		t.Errorf("queue_size = %v (%T)", v, v)
	}
	if v := dig(got, "exporters", "cloudwatch_groups", "sending_queue", "storage"); v != "queue_storage" {
		t.Errorf("storage = %v", v)
	}
}

func TestSetMessageFormat(t *testing.T) {
	for _, c := range []struct {
		format  string
		wantErr bool
	}{
		{format: "raw"},
		{format: "json"},
		{format: "otlp", wantErr: true},
	} {
		t.Run(c.format, func(t *testing.T) {
			s, _ := loadShipped(t, localForTest(t.TempDir()))
			err := s.SetMessageFormat(c.format)
			got := afterEdit(t, s, err, c.wantErr)
			if got == nil {
				return
			}
			if v := dig(got, "exporters", "cloudwatch_groups", "message_format"); v != c.format {
				t.Errorf("message_format = %v", v)
			}
			if v := dig(got, "exporters", "cloudwatch_groups", "sending_queue", "storage"); v != "queue_storage" {
				t.Errorf("the other settings changed: sending_queue storage = %v", v)
			}
		})
	}
}

// afterEdit checks an edit's error against wantErr and returns the edited configuration, or nil
// when the edit was refused as wanted.
func afterEdit(t *testing.T, s *Shipped, err error, wantErr bool) map[string]any {
	t.Helper()
	if wantErr {
		if err == nil {
			t.Fatal("accepted")
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(s.YAML, &got); err != nil {
		t.Fatal(err)
	}
	return got
}
