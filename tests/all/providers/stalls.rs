//! Streams that stop making progress: silence, and bytes that never
//! complete an event.

use super::*;

#[tokio::test]
async fn keep_alive_comments_do_not_keep_a_stalled_stream_open() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(
            Reply::turn(Script::text("never finished"))
                .keep_alive_after(2, Duration::from_millis(50)),
        );
        server.push(Script::text("recovered"));
        let mut cfg = config(&server, Some(KEY), retries(2));
        cfg.idle_timeout = Duration::from_millis(400);
        let (result, events) = run(&HttpProvider::new(cfg).unwrap(), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "recovered", "{format:?}");
        let retries = retrying(&events);
        assert_eq!(retries.len(), 1, "{format:?}: {events:?}");
        assert!(
            retries[0].2.contains("stalled: no event for"),
            "{format:?}: {}",
            retries[0].2
        );
    }
}

#[tokio::test]
async fn a_stream_silent_after_two_events_is_retried_then_given_up() {
    for format in FORMATS {
        let server = MockModel::start(format);
        for _ in 0..2 {
            server.push(Reply::turn(Script::text("never finished")).stall_after(2));
        }
        let mut cfg = config(&server, Some(KEY), retries(1));
        cfg.idle_timeout = Duration::from_millis(200);
        let (result, events) = run(&HttpProvider::new(cfg).unwrap(), &ask("hi")).await;
        match result {
            Err(ProviderError::RetriesExhausted { attempts: 2, last }) => {
                assert!(last.contains("stalled"), "{format:?}: {last}");
            }
            other => panic!("{format:?}: expected RetriesExhausted, got {other:?}"),
        }
        assert_eq!(retrying(&events).len(), 1, "{format:?}");
        assert_eq!(server.request_count(), 2, "{format:?}");
    }
}
