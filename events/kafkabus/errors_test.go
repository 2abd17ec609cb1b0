package kafkabus

import (
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go"
)

func TestResetRetriesOnlyTransientAnswersBeforeTheCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("replay: committed offsets: %w", kafka.NotCoordinatorForGroup), true},
		{fmt.Errorf("replay: committed offsets: %w", kafka.GroupLoadInProgress), true},
		{fmt.Errorf("replay: t: %w", ErrTopicNotReady), true},
		{fmt.Errorf("replay: commit: %w: %w", errCommitStage, kafka.NotCoordinatorForGroup), false},
		{fmt.Errorf("replay: group has 1 active members"), false},
		{fmt.Errorf("replay: %w", kafka.GroupAuthorizationFailed), false},
	} {
		if got := Retriable(tc.err); got != tc.want {
			t.Errorf("Retriable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
