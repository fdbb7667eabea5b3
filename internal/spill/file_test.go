package spill

import (
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// A File gives back every message as it was put, before and after its
// buffer is written, leaves no name on disk, and refuses what it cannot
// keep straight.
func TestFileGivesBackWhatWasPut(t *testing.T) {
	dir := t.TempDir()
	s, err := CreateFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the file left a name on disk: %v", entries)
	}
	var put []triage.Message
	for i := range 3 {
		m := triage.Message{Queue: "q", Position: i, Body: []byte{byte(i), 0xff}, Headers: triage.Headers{"n": int64(i)},
			Properties: triage.Properties{MessageID: "m", Timestamp: time.Unix(1700000000, 5).UTC()}}
		if err := s.Put(m); err != nil {
			t.Fatal(err)
		}
		put = append(put, m)
	}
	for i, want := range put { // still in the buffer
		if got, err := s.Message(i); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("message %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Message(1); err != nil || !reflect.DeepEqual(got, put[1]) {
		t.Errorf("message 1 after the flush: %+v, %v", got, err)
	}
	head, err := s.MessageHead(2)
	if want := put[2]; err != nil || head.Body != nil || !reflect.DeepEqual(head.Headers, want.Headers) || head.Properties != want.Properties {
		t.Errorf("head of message 2: %+v, %v; want its headers and properties, no body", head, err)
	}
	if err := s.Put(triage.Message{Position: 7}); err == nil {
		t.Error("a message put out of order was taken")
	}
	if _, err := s.Message(3); err == nil {
		t.Error("a position never put was read")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Message(0); !errors.Is(err, ErrClosed) {
		t.Errorf("read after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
