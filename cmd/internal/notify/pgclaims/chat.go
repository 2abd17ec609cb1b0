package pgclaims

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/chat"
)

// The chat's watches and offsets (migration 012).
var (
	//go:embed queries/chat_list.sql
	chatListSQL string
	//go:embed queries/chat_add.sql
	chatAddSQL string
	//go:embed queries/chat_name.sql
	chatNameSQL string
	//go:embed queries/chat_mute.sql
	chatMuteSQL string
	//go:embed queries/chat_remove.sql
	chatRemoveSQL string
	//go:embed queries/chat_offset.sql
	chatOffsetSQL string
	//go:embed queries/chat_set_offset.sql
	chatSetOffsetSQL string
	//go:embed queries/chat_specs_typed.sql
	chatSpecsTypedSQL string
	//go:embed queries/chat_spec_set.sql
	chatSpecSetSQL string
)

var _ notify.ChatStore = (*Store)(nil)

// ChatWatches implements notify.ChatStore: the chat's watches, oldest first, each spec in its
// canonical form (upgradeSpecs).
func (s *Store) ChatWatches(ctx context.Context) ([]notify.ChatWatch, error) {
	if err := s.upgradeSpecs(ctx); err != nil {
		return nil, err
	}
	rows, err := s.Pool.Query(ctx, chatListSQL)
	if err != nil {
		return nil, fmt.Errorf("read chat watches: %w", err)
	}
	var out []notify.ChatWatch
	var w notify.ChatWatch
	_, err = pgx.ForEachRow(rows, []any{&w.Name, &w.Channel, &w.Spec, &w.Muted, &w.By, &w.CreatedAt}, func() error {
		out = append(out, w)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chat watches: %w", err)
	}
	return out, nil
}

// AddChatWatch implements notify.ChatStore: the name is chat-<id>, the id (an identity) never
// given before.
func (s *Store) AddChatWatch(ctx context.Context, w notify.ChatWatch, taken func(string) bool) (string, error) {
	var name string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, chatAddSQL, w.Channel, w.Spec, w.Muted, w.By, w.CreatedAt).Scan(&id); err != nil {
			return err
		}
		name = fmt.Sprintf("chat-%d", id)
		for i := 2; taken != nil && taken(name); i++ {
			name = fmt.Sprintf("chat-%d-%d", id, i)
		}
		_, err := tx.Exec(ctx, chatNameSQL, id, name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("add chat watch: %w", err)
	}
	return name, nil
}

// SetChatWatchMuted implements notify.ChatStore.
func (s *Store) SetChatWatchMuted(ctx context.Context, name string, muted bool) (bool, error) {
	tag, err := s.Pool.Exec(ctx, chatMuteSQL, name, muted)
	if err != nil {
		return false, fmt.Errorf("mute chat watch %s: %w", name, err)
	}
	return tag.RowsAffected() > 0, nil
}

// RemoveChatWatch implements notify.ChatStore.
func (s *Store) RemoveChatWatch(ctx context.Context, name string) (bool, error) {
	tag, err := s.Pool.Exec(ctx, chatRemoveSQL, name)
	if err != nil {
		return false, fmt.Errorf("remove chat watch %s: %w", name, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ChatOffset implements notify.ChatStore. The offset is the bot's: a channel's is kept under
// its token's BotKey when Bots has it (booking-consumer sets every command channel's), else
// under its name.
func (s *Store) ChatOffset(ctx context.Context, channel string) (int64, error) {
	var next int64
	err := s.Pool.QueryRow(ctx, chatOffsetSQL, s.offsetKey(channel)).Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the chat offset of %s: %w", channel, err)
	}
	return next, nil
}

// SetChatOffset implements notify.ChatStore (committed when it returns).
func (s *Store) SetChatOffset(ctx context.Context, channel string, next int64) error {
	if _, err := s.Pool.Exec(ctx, chatSetOffsetSQL, s.offsetKey(channel), next); err != nil {
		return fmt.Errorf("keep the chat offset of %s: %w", channel, err)
	}
	return nil
}

// offsetKey is the chat_offsets row of channel: its bot's key, else its name.
func (s *Store) offsetKey(channel string) string {
	if k, ok := s.Bots[channel]; ok {
		return k
	}
	return channel
}

// upgradeSpecs rewrites every chat watch still stored as /watch's arguments as typed (spec_form 1:
// written before migration 013, or by a notifier of then during an upgrade) in its canonical form,
// with the meaning it had (chat.UpgradeSpec). One that no longer parses is left as it is (it
// was left out before too).
func (s *Store) upgradeSpecs(ctx context.Context) error {
	rows, err := s.Pool.Query(ctx, chatSpecsTypedSQL)
	if err != nil {
		return fmt.Errorf("read chat watches: %w", err)
	}
	var ids []int64
	var specs []string
	var id int64
	var spec string
	if _, err := pgx.ForEachRow(rows, []any{&id, &spec}, func() error {
		ids, specs = append(ids, id), append(specs, spec)
		return nil
	}); err != nil {
		return fmt.Errorf("read chat watches: %w", err)
	}
	for i, id := range ids {
		canonical, err := chat.UpgradeSpec(specs[i])
		if err != nil {
			continue
		}
		if _, err := s.Pool.Exec(ctx, chatSpecSetSQL, id, canonical); err != nil {
			return fmt.Errorf("rewrite chat watch %d in its canonical form: %w", id, err)
		}
	}
	return nil
}
