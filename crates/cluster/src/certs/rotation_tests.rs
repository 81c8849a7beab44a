#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

const T0: i64 = 1_800_000_000;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(T0 + seconds).unwrap()
}

/// The e2e test's lifetimes: a CA for 2 minutes, rotated with 1 minute left; serving
/// certificates for 40 s, reissued with 15 s left; a new CA trusted 10 s before it signs.
fn wanted() -> Wanted {
    Wanted {
        names: vec![
            "localhost".into(),
            "127.0.0.1".into(),
            "celer.celer-system.svc".into(),
        ],
        lifetimes: Lifetimes {
            ca: Duration::from_secs(120),
            ca_renew_before: Duration::from_secs(60),
            serving: Duration::from_secs(40),
            serving_renew_before: Duration::from_secs(15),
            overlap: Duration::from_secs(10),
        },
    }
}

fn fresh(now: i64) -> Contents {
    step(None, at(now), &wanted(), true).unwrap().write.unwrap()
}

fn state(c: &Contents) -> State {
    read(c).unwrap().unwrap()
}

fn changes(c: &Contents, now: i64, published: bool) -> Vec<Change> {
    plan(Some(&state(c)), at(now), &wanted(), published).changes
}

/// Applies what is due at `now`.
fn advance(c: &Contents, now: i64, published: bool) -> Contents {
    step(Some(c), at(now), &wanted(), published)
        .unwrap()
        .write
        .unwrap_or_else(|| c.clone())
}

#[test]
fn a_fresh_secret_holds_a_ca_its_bundle_and_a_serving_certificate_it_signed() {
    let first = step(None, at(0), &wanted(), false).unwrap();
    assert_eq!(first.plan.changes, vec![Change::Create]);
    let c = first.write.unwrap();
    let s = state(&c);
    assert_eq!(s.bundle, vec![s.issuer.cert.clone()]);
    assert!(s.next.is_none());
    assert!(s.serving.signed_by(&s.issuer.cert));
    assert!(!s.serving.is_ca);
    for name in ["localhost", "127.0.0.1", "celer.celer-system.svc"] {
        assert!(s.serving.names.contains(&name.to_string()), "{name}");
    }
    assert_eq!(s.serving.not_after, at(40));
    assert_eq!(s.issuer.cert.not_after, at(120));
    assert!(s.issuer.cert.common_name.starts_with("celer webhook CA "));
    assert_eq!(s.bundle_added_at, Some(at(0)));
    assert_eq!(c.annotations[BUNDLE_ADDED_AT], "2027-01-15T08:00:00Z");
    // Nothing else is due until the serving certificate's renewal.
    let next = step(Some(&c), at(1), &wanted(), false).unwrap();
    assert_eq!(next.write, None);
    assert_eq!(next.plan.recheck_at, at(25));
}

#[test]
fn a_placeholder_secret_with_empty_values_is_filled() {
    let mut placeholder = Contents::default();
    placeholder.data.insert(TLS_CRT.into(), Vec::new());
    placeholder.data.insert(TLS_KEY.into(), Vec::new());
    assert_eq!(read(&placeholder).unwrap(), None);
    let step = step(Some(&placeholder), at(0), &wanted(), true).unwrap();
    assert_eq!(step.plan.changes, vec![Change::Create]);
    assert!(read(&step.write.unwrap()).unwrap().is_some());
}

#[test]
fn serving_renewal_under_the_same_ca_leaves_the_bundle_alone() {
    let c = fresh(0);
    assert!(changes(&c, 24, true).is_empty());
    assert_eq!(
        changes(&c, 25, false),
        vec![Change::RenewServing(Renewal::Expiring)]
    );
    let renewed = advance(&c, 25, false);
    let (before, after) = (state(&c), state(&renewed));
    assert_eq!(renewed.data[CA_BUNDLE], c.data[CA_BUNDLE]);
    assert_eq!(renewed.data[ISSUER_CRT], c.data[ISSUER_CRT]);
    assert_eq!(renewed.data[ISSUER_KEY], c.data[ISSUER_KEY]);
    assert_eq!(renewed.annotations, c.annotations);
    assert_ne!(after.serving, before.serving);
    assert_ne!(renewed.data[TLS_KEY], c.data[TLS_KEY]);
    assert!(after.serving.signed_by(&after.issuer.cert));
    assert_eq!(after.serving.not_after, at(65));
}

#[test]
fn an_expired_serving_certificate_is_reissued_at_once() {
    let c = fresh(0);
    assert_eq!(
        changes(&c, 50, true),
        vec![Change::RenewServing(Renewal::Expiring)]
    );
}

#[test]
fn a_ca_is_staged_in_the_bundle_then_signs_after_the_overlap_then_leaves_at_its_end() {
    // Renewals under the first CA until its rotation is due (120 - 60 s).
    let mut c = fresh(0);
    for t in [25, 50] {
        c = advance(&c, t, true);
    }
    let old = state(&c);

    // Stage 1: a new CA in the bundle; the serving certificate is still the old CA's.
    assert_eq!(changes(&c, 60, true), vec![Change::StageCa]);
    let staged = advance(&c, 60, true);
    let s = state(&staged);
    let next = s.next.clone().unwrap().cert;
    assert_eq!(s.bundle, vec![old.issuer.cert.clone(), next.clone()]);
    assert_eq!(s.issuer, old.issuer);
    assert_eq!(staged.data[TLS_CRT], c.data[TLS_CRT]);
    assert_eq!(s.bundle_added_at, Some(at(60)));
    assert_eq!(next.not_after, at(180));

    // Within the overlap nothing moves; the next look is when it ends.
    let waiting = step(Some(&staged), at(65), &wanted(), true).unwrap();
    assert_eq!(waiting.write, None);
    assert_eq!(waiting.plan.recheck_at, at(70));
    assert!(!s.awaits_publication(at(65), &wanted().lifetimes));

    // Stage 2 waits for the webhook configurations to carry the grown bundle.
    assert!(s.awaits_publication(at(70), &wanted().lifetimes));
    let unpublished = step(Some(&staged), at(70), &wanted(), false).unwrap();
    assert_eq!(unpublished.write, None);
    assert_eq!(unpublished.plan.recheck_at, after(at(70), PUBLICATION_POLL));
    assert_eq!(changes(&staged, 70, true), vec![Change::PromoteCa]);
    let promoted = advance(&staged, 70, true);
    let p = state(&promoted);
    assert_eq!(p.issuer.cert, next);
    assert!(p.next.is_none());
    assert!(p.serving.signed_by(&next));
    assert!(!p.serving.signed_by(&old.issuer.cert));
    // The bundle is unchanged: the old CA stays for replicas that have not swapped yet.
    assert_eq!(promoted.data[CA_BUNDLE], staged.data[CA_BUNDLE]);
    assert_eq!(promoted.annotations, staged.annotations);
    assert!(!promoted.data.contains_key(NEXT_CRT));
    assert!(!promoted.data.contains_key(NEXT_KEY));

    // Stage 3: the old CA leaves the bundle when it expires (120 s), when the new one's own
    // rotation starts.
    let renewed = advance(&promoted, 100, true);
    assert!(changes(&renewed, 119, true).is_empty());
    assert_eq!(
        changes(&renewed, 120, true),
        vec![Change::StageCa, Change::DropExpired]
    );
    let dropped = advance(&renewed, 120, true);
    let d = state(&dropped);
    assert_eq!(d.bundle.len(), 2);
    assert_eq!(d.bundle[0], next);
    assert_eq!(dropped.data[TLS_CRT], renewed.data[TLS_CRT]);
    // Removing a CA alone is not adding one: the overlap clock stays.
    let only_dropped = apply(
        &renewed,
        Some(&state(&renewed)),
        &[Change::DropExpired],
        at(120),
        &wanted(),
    )
    .unwrap();
    assert_eq!(state(&only_dropped).bundle, vec![next]);
    assert_eq!(only_dropped.annotations, renewed.annotations);
}

#[test]
fn over_several_rotations_the_bundle_always_holds_the_serving_ca_published_for_the_overlap() {
    let w = wanted();
    let mut c = fresh(0);
    // When each CA (by DER) entered the bundle.
    let mut since: Vec<(Vec<u8>, i64)> = vec![(state(&c).issuer.cert.der, 0)];
    let mut rotations = 0;
    let mut issuers = vec![state(&c).issuer.cert.der];
    for t in 0..600 {
        c = advance(&c, t, true);
        let s = state(&c);
        for ca in &s.bundle {
            if !since.iter().any(|(d, _)| *d == ca.der) {
                since.push((ca.der.clone(), t));
            }
        }
        assert!(
            s.serving.valid_at(at(t)),
            "serving certificate expired at {t}"
        );
        let issuer = s.bundle.iter().find(|ca| s.serving.signed_by(ca));
        let issuer = issuer.unwrap_or_else(|| panic!("serving CA not in the bundle at {t}"));
        let added = since.iter().find(|(d, _)| *d == issuer.der).unwrap().1;
        assert!(
            added == 0 || t - added >= w.lifetimes.overlap.as_secs() as i64,
            "at {t}: the serving CA was added at {added}, less than the overlap before"
        );
        assert!(s.bundle.len() <= 2, "at {t}: {} CAs", s.bundle.len());
        if !issuers.contains(&s.issuer.cert.der) {
            issuers.push(s.issuer.cert.der.clone());
            rotations += 1;
        }
        // Nothing is due right after a step.
        assert!(changes(&c, t, true).is_empty(), "at {t}");
    }
    // A CA signs from 70 s after the previous one was made, for 60 s: 9 in 600 s.
    assert_eq!(rotations, 9);
}

#[test]
fn an_expired_issuer_with_nothing_staged_starts_over() {
    let c = fresh(0);
    let plan = plan(Some(&state(&c)), at(500), &wanted(), true);
    assert_eq!(plan.changes, vec![Change::Regenerate]);
    let again = advance(&c, 500, true);
    let s = state(&again);
    assert_eq!(s.bundle, vec![s.issuer.cert.clone()]);
    assert_ne!(again.data[ISSUER_CRT], c.data[ISSUER_CRT]);
    assert!(s.serving.valid_at(at(500)));
    assert_eq!(s.bundle_added_at, Some(at(500)));
}

#[test]
fn an_expired_issuer_with_a_staged_ca_promotes_it_at_once() {
    let staged = advance(&fresh(0), 60, true);
    // Never published, and now the old CA is gone: the staged one is all there is.
    assert_eq!(
        changes(&staged, 125, false),
        vec![Change::PromoteCa, Change::DropExpired]
    );
    let promoted = advance(&staged, 125, false);
    let s = state(&promoted);
    assert_eq!(s.bundle.len(), 1);
    assert_eq!(s.bundle[0], s.issuer.cert);
    assert!(s.serving.signed_by(&s.issuer.cert));
}

#[test]
fn a_staged_ca_without_its_time_restarts_the_overlap() {
    let mut staged = advance(&fresh(0), 60, true);
    staged
        .annotations
        .insert(BUNDLE_ADDED_AT.into(), "yesterday".into());
    assert_eq!(changes(&staged, 70, true), vec![Change::RestartOverlap]);
    let restarted = advance(&staged, 70, true);
    assert_eq!(state(&restarted).bundle_added_at, Some(at(70)));
    assert!(changes(&restarted, 79, true).is_empty());
    assert_eq!(changes(&restarted, 80, true), vec![Change::PromoteCa]);
}

#[test]
fn a_ca_missing_from_the_bundle_is_put_back() {
    let staged = advance(&fresh(0), 60, true);
    let s = state(&staged);
    let mut edited = staged.clone();
    edited
        .data
        .insert(CA_BUNDLE.into(), s.issuer.cert.pem().into_bytes());
    assert_eq!(changes(&edited, 61, true), vec![Change::RepairBundle]);
    let repaired = advance(&edited, 61, true);
    let r = state(&repaired);
    assert_eq!(r.bundle, s.bundle);
    // The staged CA was out of the bundle: its overlap starts again.
    assert_eq!(r.bundle_added_at, Some(at(61)));
}

#[test]
fn a_new_name_reissues_the_serving_certificate() {
    let c = fresh(0);
    let mut more = wanted();
    more.names.push("celer.celer-system".into());
    let step = step(Some(&c), at(1), &more, true).unwrap();
    assert_eq!(
        step.plan.changes,
        vec![Change::RenewServing(Renewal::Names)]
    );
    let s = state(&step.write.unwrap());
    assert!(s.serving.names.contains(&"celer.celer-system".to_string()));
    // Names are matched without case, addresses as addresses.
    let mut same = wanted();
    same.names = vec!["LOCALHOST".into(), "127.0.0.1".into()];
    assert!(
        plan(Some(&state(&c)), at(1), &same, true)
            .changes
            .is_empty()
    );
    same.names.push("10.0.0.1".into());
    assert_eq!(
        plan(Some(&state(&c)), at(1), &same, true).changes,
        vec![Change::RenewServing(Renewal::Names)]
    );
}

#[test]
fn replicas_given_different_names_converge_on_a_certificate_for_all() {
    let mut a = wanted();
    a.names.push("a.example".into());
    let mut b = wanted();
    b.names.push("b.example".into());
    let c = step(None, at(0), &a, true).unwrap().write.unwrap();
    let by_b = step(Some(&c), at(1), &b, true).unwrap();
    assert_eq!(
        by_b.plan.changes,
        vec![Change::RenewServing(Renewal::Names)]
    );
    let c = by_b.write.unwrap();
    for w in [&a, &b] {
        assert!(step(Some(&c), at(2), w, true).unwrap().write.is_none());
    }
    // A renewal keeps them too.
    let renewed = step(Some(&c), at(26), &a, true).unwrap().write.unwrap();
    let names = state(&renewed).serving.names;
    assert!(names.contains(&"a.example".to_string()) && names.contains(&"b.example".to_string()));
}

#[test]
fn a_serving_certificate_due_but_cut_to_its_cas_end_is_not_reissued_again_and_again() {
    let lifetimes = Lifetimes {
        ca: Duration::from_secs(120),
        ca_renew_before: Duration::from_secs(20),
        serving: Duration::from_secs(100),
        serving_renew_before: Duration::from_secs(50),
        overlap: Duration::from_secs(10),
    };
    let w = Wanted {
        names: wanted().names,
        lifetimes,
    };
    let c = step(None, at(0), &w, true).unwrap().write.unwrap();
    let renewed = step(Some(&c), at(50), &w, true).unwrap().write.unwrap();
    // Cut to the CA's end (120 s), it is due again at once, but a new one would end no later.
    assert_eq!(state(&renewed).serving.not_after, at(120));
    let again = step(Some(&renewed), at(80), &w, true).unwrap();
    assert_eq!(again.write, None);
    assert_eq!(again.plan.recheck_at, at(100));
}

#[test]
fn keys_and_annotations_of_others_are_kept() {
    let mut c = Contents::default();
    c.data.insert("extra".into(), b"theirs".to_vec());
    c.annotations
        .insert("example.com/owner".into(), "team-a".into());
    let created = step(Some(&c), at(0), &wanted(), true)
        .unwrap()
        .write
        .unwrap();
    assert_eq!(created.data["extra"], b"theirs");
    assert_eq!(created.annotations["example.com/owner"], "team-a");
    let renewed = advance(&created, 25, true);
    assert_eq!(renewed.data["extra"], b"theirs");
    assert_eq!(renewed.annotations["example.com/owner"], "team-a");
    let staged = advance(&renewed, 60, true);
    assert_eq!(staged.data["extra"], b"theirs");
    assert_eq!(staged.annotations["example.com/owner"], "team-a");
}

fn error(c: &Contents) -> String {
    match read(c) {
        Err(e) => e.to_string(),
        Ok(s) => panic!("read: {s:?}"),
    }
}

#[test]
fn corrupt_values_are_refused_naming_their_key() {
    let good = fresh(0);
    let other = fresh(0);

    let mut c = good.clone();
    c.data.insert(TLS_CRT.into(), b"not a certificate".to_vec());
    assert_eq!(error(&c), "Secret key tls.crt: no PEM CERTIFICATE block");

    let mut c = good.clone();
    c.data.insert(
        TLS_CRT.into(),
        b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_vec(),
    );
    assert!(
        error(&c).starts_with("Secret key tls.crt: not an X.509 certificate"),
        "{}",
        error(&c)
    );

    let mut c = good.clone();
    c.data.insert(TLS_KEY.into(), other.data[TLS_KEY].clone());
    assert_eq!(
        error(&c),
        "Secret key tls.key: not the private key of tls.crt"
    );

    let mut c = good.clone();
    c.data.insert(
        ISSUER_KEY.into(),
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".to_vec(),
    );
    assert!(
        error(&c).starts_with("Secret key issuer.key: not a private key"),
        "{}",
        error(&c)
    );

    let mut c = good.clone();
    c.data.insert(ISSUER_CRT.into(), good.data[TLS_CRT].clone());
    assert_eq!(
        error(&c),
        "Secret key issuer.crt: \"celer webhook\" is not a CA certificate"
    );

    let mut c = good.clone();
    let mut bundle = good.data[CA_BUNDLE].clone();
    bundle.extend_from_slice(&good.data[TLS_CRT]);
    c.data.insert(CA_BUNDLE.into(), bundle);
    assert_eq!(
        error(&c),
        "Secret key ca.crt: certificate 2 (\"celer webhook\") is not a CA certificate"
    );

    let mut c = good.clone();
    let mut two = good.data[TLS_CRT].clone();
    two.extend_from_slice(&other.data[TLS_CRT]);
    c.data.insert(TLS_CRT.into(), two);
    assert_eq!(
        error(&c),
        "Secret key tls.crt: 2 certificates where one was expected"
    );

    let mut c = good.clone();
    c.data
        .insert(NEXT_CRT.into(), other.data[ISSUER_CRT].clone());
    assert!(
        error(&c).starts_with("the Secret has next-issuer.crt but not next-issuer.key"),
        "{}",
        error(&c)
    );

    // The loop's step reports the same error (never a panic).
    let mut c = good.clone();
    c.data.insert(TLS_KEY.into(), vec![0xff, 0xfe]);
    let e = step(Some(&c), at(1), &wanted(), true).unwrap_err();
    assert_eq!(e.to_string(), "Secret key tls.key: not PEM text");
}

#[test]
fn a_secret_made_by_something_else_is_not_taken_over() {
    // cert-manager's Secrets hold tls.crt, tls.key and ca.crt, with no CA key.
    let good = fresh(0);
    let mut c = Contents::default();
    for key in [TLS_CRT, TLS_KEY, CA_BUNDLE] {
        c.data.insert(key.into(), good.data[key].clone());
    }
    let e = error(&c);
    assert!(
        e.starts_with("the Secret has tls.crt, tls.key, ca.crt but not issuer.crt, issuer.key: it is not one celer keeps"),
        "{e}"
    );
    assert!(e.contains("--tls-cert and --tls-key"), "{e}");
}

#[test]
fn lifetimes_the_rotation_cannot_keep_are_refused() {
    assert!(Lifetimes::default().check().is_ok());
    assert!(wanted().lifetimes.check().is_ok());
    let mut l = wanted().lifetimes;
    l.serving_renew_before = l.serving;
    assert!(
        l.check()
            .unwrap_err()
            .to_string()
            .contains("serving certificate's renewal window")
    );
    let mut l = wanted().lifetimes;
    l.ca_renew_before = Duration::from_secs(15);
    assert!(
        l.check()
            .unwrap_err()
            .to_string()
            .contains("at least twice the overlap")
    );
    let mut l = wanted().lifetimes;
    l.ca_renew_before = l.ca;
    assert!(
        l.check()
            .unwrap_err()
            .to_string()
            .contains("CA's renewal window")
    );
    let mut l = wanted().lifetimes;
    l.overlap = Duration::ZERO;
    assert!(l.check().is_err());
}
