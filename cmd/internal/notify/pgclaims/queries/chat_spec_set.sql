-- A chat watch's spec rewritten in its canonical form (once: a row another notifier rewrote
-- already is left alone).
update chat_watches set spec = $2, spec_form = 2 where id = $1 and spec_form = 1;
