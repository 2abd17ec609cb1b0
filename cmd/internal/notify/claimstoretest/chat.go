package claimstoretest

import (
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// chatStore is f's store as the notify.ChatStore every claim store also is (the chat's watches
// live beside the claims).
func chatStore(t *testing.T, st notify.ClaimStore) notify.ChatStore {
	t.Helper()
	cs, ok := st.(notify.ChatStore)
	if !ok {
		t.Fatalf("%T is not a notify.ChatStore", st)
	}
	return cs
}

// chatWatchesAndOffsetSurviveReopen: the chat's watches (added, muted, removed) and a channel's
// getUpdates offset survive a restart; a name is never given twice, not even after a remove, and
// never one a file watch has.
func chatWatchesAndOffsetSurviveReopen(t *testing.T, f Factory) {
	ctx := t.Context()
	old := f.New(t)
	st := chatStore(t, old)
	if off, err := st.ChatOffset(ctx, "tg"); err != nil || off != 0 {
		t.Fatalf("fresh offset %d, %v", off, err)
	}
	taken := func(n string) bool { return n == "chat-2" } // a file watch's
	made := time.Unix(1, 0).UTC()
	for i, w := range []notify.ChatWatch{
		{Channel: "tg", Spec: "토,일 05:00-08:00 15만 레이크", By: 42, CreatedAt: made},
		{Channel: "tg", Spec: "평일", CreatedAt: time.Unix(2, 0)},
	} {
		name, err := st.AddChatWatch(ctx, w, taken)
		if want := []string{"chat-1", "chat-2-2"}[i]; err != nil || name != want {
			t.Fatalf("add %d: %q, %v; want %s", i, name, err, want)
		}
	}
	if ok, err := st.SetChatWatchMuted(ctx, "chat-1", true); !ok || err != nil {
		t.Fatalf("mute: %v, %v", ok, err)
	}
	if ok, err := st.SetChatWatchMuted(ctx, "chat-9", true); ok || err != nil {
		t.Fatalf("mute of a watch that is not there: %v, %v", ok, err)
	}
	if ok, err := st.RemoveChatWatch(ctx, "chat-2-2"); !ok || err != nil {
		t.Fatalf("remove: %v, %v", ok, err)
	}
	if ok, _ := st.RemoveChatWatch(ctx, "chat-9"); ok {
		t.Fatal("removed a watch that is not there")
	}
	for _, next := range []int64{7, 12} {
		if err := st.SetChatOffset(ctx, "tg", next); err != nil {
			t.Fatal(err)
		}
	}
	st = chatStore(t, f.Reopen(t, old))
	// A removed watch's number is never given again: the new one inherits nothing of it.
	if name, err := st.AddChatWatch(ctx, notify.ChatWatch{Channel: "tg", Spec: "주말", CreatedAt: time.Unix(3, 0)}, taken); err != nil || name != "chat-3" {
		t.Fatalf("add after a remove and a reopen: %q, %v; want chat-3", name, err)
	}
	if _, err := st.RemoveChatWatch(ctx, "chat-3"); err != nil {
		t.Fatal(err)
	}
	ws, err := st.ChatWatches(ctx)
	if err != nil || len(ws) != 1 || ws[0].Name != "chat-1" || ws[0].Channel != "tg" || !ws[0].Muted || ws[0].By != 42 ||
		ws[0].Spec != "토,일 05:00-08:00 15만 레이크" || !ws[0].CreatedAt.Equal(made) {
		t.Fatalf("after reopen: %+v, %v", ws, err)
	}
	if off, err := st.ChatOffset(ctx, "tg"); err != nil || off != 12 {
		t.Fatalf("offset after reopen %d, %v; want 12", off, err)
	}
	if off, err := st.ChatOffset(ctx, "other"); err != nil || off != 0 {
		t.Fatalf("another channel's offset %d, %v; want 0", off, err)
	}
}
