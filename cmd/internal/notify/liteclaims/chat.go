package liteclaims

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/chat"
)

// The chat's watches and offsets (migration 4).
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
	//go:embed queries/chat_specs.sql
	chatSpecsSQL string
	//go:embed queries/chat_spec_set.sql
	chatSpecSetSQL string
)

// upgradeChatSpecs is migration 6: every chat watch stored before it (its spec /watch's arguments
// as typed, read by the grammar of then) is rewritten in its canonical form with the meaning it
// had (chat.UpgradeSpec). One that no longer parses is left as it is (it was left out
// before too).
func upgradeChatSpecs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, chatSpecsSQL)
	if err != nil {
		return err
	}
	type row struct {
		id   int64
		spec string
	}
	var old []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.spec); err != nil {
			rows.Close()
			return err
		}
		old = append(old, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, r := range old {
		spec, err := chat.UpgradeSpec(r.spec)
		if err != nil || spec == r.spec {
			continue
		}
		if _, err := tx.ExecContext(ctx, chatSpecSetSQL, r.id, spec); err != nil {
			return err
		}
	}
	return nil
}

var _ notify.ChatStore = (*Store)(nil)

// ChatWatches implements notify.ChatStore: the chat's watches, oldest first.
func (s *Store) ChatWatches(ctx context.Context) ([]notify.ChatWatch, error) {
	rows, err := s.db.QueryContext(ctx, chatListSQL)
	if err != nil {
		return nil, s.failed("read chat watches", err)
	}
	defer rows.Close()
	var out []notify.ChatWatch
	for rows.Next() {
		var w notify.ChatWatch
		var created int64
		if err := rows.Scan(&w.Name, &w.Channel, &w.Spec, &w.Muted, &w.By, &created); err != nil {
			return nil, s.failed("read chat watches", err)
		}
		w.CreatedAt = fromNanos(created)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("read chat watches", err)
	}
	return out, nil
}

// AddChatWatch implements notify.ChatStore: the name is chat-<id>, the id never given before.
func (s *Store) AddChatWatch(ctx context.Context, w notify.ChatWatch, taken func(string) bool) (string, error) {
	var name string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, chatAddSQL, w.Channel, w.Spec, w.Muted, w.By, nanos(w.CreatedAt)).Scan(&id); err != nil {
			return err
		}
		name = fmt.Sprintf("chat-%d", id)
		for i := 2; taken != nil && taken(name); i++ {
			name = fmt.Sprintf("chat-%d-%d", id, i)
		}
		_, err := tx.ExecContext(ctx, chatNameSQL, id, name)
		return err
	})
	if err != nil {
		return "", s.failed("add chat watch", err)
	}
	return name, nil
}

// SetChatWatchMuted implements notify.ChatStore.
func (s *Store) SetChatWatchMuted(ctx context.Context, name string, muted bool) (bool, error) {
	res, err := s.db.ExecContext(ctx, chatMuteSQL, name, muted)
	if err != nil {
		return false, s.failed("mute chat watch "+name, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// RemoveChatWatch implements notify.ChatStore.
func (s *Store) RemoveChatWatch(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, chatRemoveSQL, name)
	if err != nil {
		return false, s.failed("remove chat watch "+name, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ChatOffset implements notify.ChatStore.
func (s *Store) ChatOffset(ctx context.Context, channel string) (int64, error) {
	var next int64
	err := s.db.QueryRowContext(ctx, chatOffsetSQL, channel).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.failed("read the chat offset of "+channel, err)
	}
	return next, nil
}

// SetChatOffset implements notify.ChatStore (durable when it returns: synchronous=FULL).
func (s *Store) SetChatOffset(ctx context.Context, channel string, next int64) error {
	_, err := s.db.ExecContext(ctx, chatSetOffsetSQL, channel, next)
	if err != nil {
		return s.failed("keep the chat offset of "+channel, err)
	}
	return nil
}
