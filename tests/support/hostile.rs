//! Hostile summaries for the secret scan: the clean demo summary
//! (`assets/demo/01_clean_accepted.json`) with clauses an attacker added to hide a credential,
//! one class of hiding place per function, several variants each (vendors, slots, separators,
//! positions). Every value is made up here from a fixed seed: none is a live credential.
#![allow(dead_code)]

/// One hostile edit: the clauses added to the summary and the secret pieces in them, every one
/// of which a finding must cover (a split secret lists each fragment).
pub struct Variant {
    pub name: String,
    pub clauses: Vec<String>,
    pub pieces: Vec<String>,
    /// Whether the edited summary stays in the default policy's controlled language, so that
    /// only the secret scan stands between it and ACCEPTED.
    pub parses: bool,
}

fn variant(name: &str, clauses: Vec<String>, pieces: Vec<String>, parses: bool) -> Variant {
    Variant {
        name: name.to_owned(),
        clauses,
        pieces,
        parses,
    }
}

/// A small deterministic generator, so that the made-up values are the same on every run.
pub struct Rng(u64);

pub const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const HEX: &[u8] = b"0123456789abcdef";
pub const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` characters of `alphabet`; alphabets with both cases get both, and a digit.
    pub fn pick(&mut self, alphabet: &[u8], n: usize) -> String {
        let mut s: Vec<u8> = (0..n)
            .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
            .collect();
        if n >= 3 && alphabet.contains(&b'a') && alphabet.contains(&b'A') {
            s[0] = b'Q';
            s[1] = b'k';
            s[2] = b'7';
        }
        String::from_utf8(s).unwrap()
    }
}

/// The demo's clean summary with `clauses` added before "The task is not done.".
pub fn summary_with(base: &str, clauses: &[String]) -> String {
    let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
    let at = lines
        .iter()
        .position(|l| l == "The task is not done.")
        .unwrap_or(lines.len());
    for (i, c) in clauses.iter().enumerate() {
        lines.insert(at + i, c.clone());
    }
    lines.join("\n")
}

/// The most words the default policy's slot types take (`max_words` in
/// `assets/policies/default.toml`); the grammar counts words as `cq::engine::words` does, so
/// a random mixed-case value fits only if its camel-case humps are few enough.
pub const BRANCH_WORDS: usize = 8;
pub const PATH_WORDS: usize = 16;
pub const IDENTIFIER_WORDS: usize = 12;
pub const TEST_WORDS: usize = 16;

/// Whether `value` is a repository-relative path the `{path}` slot takes: no leading or
/// trailing `/`, no empty part, at most `max` words.
pub fn path_fits(value: &str, max: usize) -> bool {
    !value.starts_with('/')
        && !value.ends_with('/')
        && !value.contains("//")
        && cq::engine::words::word_count(value) <= max
}

/// Draws values from `make` until one is taken by its slot (`fits`), as an attacker puts a
/// real token in a slot it fits; the last draw and `false` when none is.
fn draw(
    rng: &mut Rng,
    mut make: impl FnMut(&mut Rng) -> String,
    fits: impl Fn(&str) -> bool,
) -> (String, bool) {
    let mut value = make(rng);
    for _ in 0..4000 {
        if fits(&value) {
            return (value, true);
        }
        value = make(rng);
    }
    (value, false)
}

/// Vendor tokens that identify themselves by a prefix.
/// A vendor's name and how its tokens are made.
type Vendor = (&'static str, fn(&mut Rng) -> String);

fn tokens() -> Vec<Vendor> {
    vec![
        ("github", |r| format!("ghp_{}", r.pick(ALNUM, 36))),
        ("gitlab", |r| format!("glpat-{}", r.pick(ALNUM, 20))),
        ("aws", |r| format!("AKIA{}", r.pick(UPPER_DIGITS, 16))),
        ("stripe", |r| format!("sk_live_{}", r.pick(ALNUM, 24))),
        ("openai", |r| format!("sk-proj-{}", r.pick(ALNUM, 48))),
        ("npm", |r| format!("npm_{}", r.pick(ALNUM, 36))),
        ("huggingface", |r| format!("hf_{}", r.pick(ALNUM, 34))),
        ("slack", |r| {
            format!(
                "xoxb-{}-{}-{}",
                r.pick(b"0123456789", 12),
                r.pick(b"0123456789", 13),
                r.pick(ALNUM, 24)
            )
        }),
        ("slack user", |r| {
            format!(
                "xoxp-{}-{}-{}-{}",
                r.pick(b"0123456789", 12),
                r.pick(b"0123456789", 12),
                r.pick(b"0123456789", 12),
                r.pick(HEX, 32)
            )
        }),
    ]
}

/// One place a glued token goes: the slot value it makes, the words its slot takes, and the
/// clause around that value.
struct Form {
    name: &'static str,
    slot: fn(&str) -> String,
    max_words: usize,
    clause: fn(&str) -> String,
}

fn form(
    name: &'static str,
    slot: fn(&str) -> String,
    max_words: usize,
    clause: fn(&str) -> String,
) -> Form {
    Form {
        name,
        slot,
        max_words,
        clause,
    }
}

/// Item 7: tokens glued to words by `_`, letters or digits, in every kind of slot. A prefix
/// of letters and digits only (`AKIA`) is glued by a symbol or a lower-case word (`token_AKIA…`,
/// `fixAKIA…`); glued after a capital or a digit it is indistinguishable from a run of random
/// text that happens to hold it, and is not tried. Each token is one its slot takes (see
/// [`draw`]), so the summary parses and only the secret scan stands between it and ACCEPTED.
pub fn glued_tokens() -> Vec<Variant> {
    let mut rng = Rng::new(7);
    let branch = |v: &str| format!("The current branch is {v}.");
    let forms = [
        form("branch fix_", |t| format!("fix_{t}"), BRANCH_WORDS, branch),
        form("branch _old", |t| format!("{t}_old"), BRANCH_WORDS, branch),
        form("capital before", |t| format!("A{t}"), BRANCH_WORDS, branch),
        form(
            "token_ in a path",
            |t| format!("config/token_{t}"),
            PATH_WORDS,
            |v| format!("Read file {v}."),
        ),
        form(
            "key_ in a function",
            |t| format!("key_{t}"),
            IDENTIFIER_WORDS,
            |v| format!("Function {v} in src/app.py was changed."),
        ),
        form(
            "digit before, test name",
            |t| format!("t9{t}_case"),
            TEST_WORDS,
            |v| format!("Test {v} passed."),
        ),
        form(
            "lower-case word before",
            |t| format!("fix{t}"),
            BRANCH_WORDS,
            branch,
        ),
        form(
            "slash after, branch",
            |t| format!("{t}/fix"),
            BRANCH_WORDS,
            branch,
        ),
        form(
            "in a file name",
            |t| format!("src/{t}_test.rs"),
            PATH_WORDS,
            |v| format!("Modified file {v}."),
        ),
        form(
            "camel case in a function",
            |t| format!("get{t}"),
            IDENTIFIER_WORDS,
            |v| format!("Function {v} in src/app.py was added."),
        ),
    ];
    // Which forms each vendor's token takes, so that every form meets several vendors (a
    // test name has no `-`, so tokens with one go elsewhere).
    let plan: [&[usize]; 9] = [
        &[2, 0, 1, 7],
        &[3, 4, 6, 9],
        &[3, 6, 1, 9, 8],
        &[6, 5, 8],
        &[4, 3, 8],
        &[5, 0, 7],
        &[1, 3, 5, 8],
        &[0, 6, 4, 7],
        &[0, 3, 9],
    ];
    let mut out = Vec::new();
    for ((vendor, make), forms_of) in tokens().into_iter().zip(plan) {
        for &f in forms_of {
            let form = &forms[f];
            let fits = |t: &str| cq::engine::words::word_count(&(form.slot)(t)) <= form.max_words;
            let (t, parses) = draw(&mut rng, make, fits);
            out.push(variant(
                &format!("{vendor} token, {}", form.name),
                vec![(form.clause)(&(form.slot)(&t))],
                vec![t],
                parses,
            ));
        }
    }
    out
}

/// Item 8: secrets in slots, their key name given by a path or an identifier.
pub fn keys_named_by_slots() -> Vec<Variant> {
    let mut rng = Rng::new(8);
    let (aws, aws_fits) = draw(
        &mut rng,
        |r| r.pick(BASE64, 40),
        |k| path_fits(&format!("aws/secret_access_key/{k}"), PATH_WORDS),
    );
    let (pw, pw_fits) = draw(
        &mut rng,
        |r| format!("Tr0{}x9", r.pick(ALNUM, 8)),
        |p| cq::engine::words::word_count(&format!("db.password.{p}")) <= BRANCH_WORDS,
    );
    let hex = rng.pick(HEX, 32);
    let (b64, b64_fits) = draw(
        &mut rng,
        |r| r.pick(ALNUM, 32),
        |k| path_fits(&format!("k8s/client_secret/{k}"), PATH_WORDS),
    );
    vec![
        variant(
            "aws secret under secret_access_key/",
            vec![format!("Read file aws/secret_access_key/{aws}.")],
            vec![aws.clone()],
            aws_fits,
        ),
        variant(
            "stripe hex key under a key-named directory",
            vec![format!("Created file secrets/stripe_api_key/{hex}.")],
            vec![hex.clone()],
            true,
        ),
        variant(
            "client secret as the file under client_secret/",
            vec![format!("Next step is to edit k8s/client_secret/{b64}.")],
            vec![b64.clone()],
            b64_fits,
        ),
        variant(
            "password after password_ in a branch",
            vec![format!("The current branch is password_{pw}.")],
            vec![pw.clone()],
            pw_fits,
        ),
        variant(
            "password after db.password. in a branch",
            vec![format!("The current branch is db.password.{pw}.")],
            vec![pw.clone()],
            pw_fits,
        ),
        variant(
            "password after admin_passwd_ in a test name",
            vec![format!("Test admin_passwd_{pw} failed.")],
            vec![pw.clone()],
            pw_fits,
        ),
        variant(
            "password after a password directory",
            vec![format!("Read file deploy/smtp_password/{pw}.")],
            vec![pw.clone()],
            pw_fits,
        ),
        variant(
            "password as a function's name part",
            vec![format!("Function login.pwd.{pw} in src/db.py was added.")],
            vec![pw],
            pw_fits,
        ),
    ]
}

/// Item 8: a storage key of 64 random bytes (88 base64 characters) written as a path. No slot
/// takes that many words, so the summary does not parse either; the scan must still find it.
/// Cut into pieces each path slot takes, it parses, and the joined view finds it.
pub fn azure_keys_as_paths() -> Vec<Variant> {
    let mut rng = Rng::new(88);
    let mut out: Vec<Variant> = [
        "Read file {}.",
        "Created file backup/{}.",
        "Next step is to edit {}.",
    ]
    .iter()
    .enumerate()
    .map(|(i, form)| {
        let key = format!("{}==", rng.pick(BASE64, 86));
        variant(
            &format!("azure key as a path, form {i}"),
            vec![form.replace("{}", &key)],
            vec![key],
            false,
        )
    })
    .collect();
    let verbs = ["Read file", "Modified file", "Created file"];
    for (n, verb) in verbs.iter().enumerate() {
        let (key, _) = draw(
            &mut rng,
            |r| format!("{}==", r.pick(BASE64, 86)),
            |k| !k.contains("//"),
        );
        let pieces = path_pieces(&key, PATH_WORDS);
        let clauses = pieces.iter().map(|p| format!("{verb} {p}.")).collect();
        out.push(variant(
            &format!("azure key cut into {} paths, form {n}", pieces.len()),
            clauses,
            pieces,
            true,
        ));
    }
    out
}

/// `body` cut into pieces that the `{path}` slot takes, each as long as it may be: no piece
/// starts or ends with `/`, none has more than `max` words.
pub fn path_pieces(body: &str, max: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let cut = (1..=rest.len())
            .rev()
            .find(|&n| {
                let (piece, after) = rest.split_at(n);
                path_fits(piece, max) && !after.starts_with('/')
            })
            .unwrap_or(rest.len());
        let (piece, after) = rest.split_at(cut);
        pieces.push(piece.to_owned());
        rest = after;
    }
    pieces
}

/// Item 8: private key bodies split over many path clauses, each piece as long as a path slot
/// takes.
pub fn private_keys_split_over_clauses() -> Vec<Variant> {
    let mut rng = Rng::new(10);
    let kinds = [
        ("rsa pkcs1", "MIIEowIBAAKCAQEA", 640),
        (
            "rsa pkcs8",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",
            512,
        ),
        ("openssh", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 420),
        ("ec sec1", "MHcCAQEEI", 144),
    ];
    let verbs = [
        "Read file",
        "Created file",
        "Modified file",
        "Next step is to edit",
    ];
    let mut out = Vec::new();
    for (k, (kind, head, len)) in kinds.iter().enumerate() {
        let (body, _) = draw(
            &mut rng,
            |r| format!("{head}{}", r.pick(BASE64, len - head.len())),
            |b| !b.contains("//"),
        );
        let pieces = path_pieces(&body, PATH_WORDS);
        let clauses = pieces
            .iter()
            .enumerate()
            // One verb throughout, or the verbs taken in turn.
            .map(|(i, p)| format!("{} {p}.", verbs[if k == 0 { 0 } else { (i + k) % 4 }]))
            .collect();
        out.push(variant(
            &format!("{kind} key body over {} clauses", pieces.len()),
            clauses,
            pieces,
            true,
        ));
    }
    out
}

/// Item 8: a hex key in the commit slot.
pub fn hex_keys_as_commits() -> Vec<Variant> {
    let mut rng = Rng::new(32);
    [32, 36, 39]
        .iter()
        .map(|&n| {
            let hex = rng.pick(HEX, n);
            variant(
                &format!("{n}-digit hex key as a commit"),
                vec![format!("Committed {hex} on branch main.")],
                vec![hex],
                true,
            )
        })
        .collect()
}

/// Item 8: AWS secrets (and other keys) split across two or three clauses.
pub fn secrets_split_across_clauses() -> Vec<Variant> {
    let mut rng = Rng::new(2);
    let secret = format!("Qk7{}", rng.pick(BASE64, 37));
    let (a, b) = secret.split_at(17);
    let id = format!("AKIA{}", rng.pick(UPPER_DIGITS, 16));
    let gh = format!("ghp_{}", rng.pick(ALNUM, 36));
    let second = format!("Qk7{}", rng.pick(BASE64, 37));
    let (c, d) = second.split_at(25);
    vec![
        variant(
            "aws secret, first part under its key name, second in the next clause",
            vec![
                format!("Read file aws/secret_access_key/{a}."),
                format!("Read file {b}."),
            ],
            vec![a.to_owned(), b.to_owned()],
            true,
        ),
        variant(
            "aws secret's key name as a branch, the secret as the next path",
            vec![
                "The current branch is aws_secret_access_key.".to_owned(),
                format!("Read file {second}."),
            ],
            vec![second.clone()],
            true,
        ),
        variant(
            "aws access key id in one clause, its secret in the next",
            vec![
                format!("The current branch is {id}."),
                format!("Created file {secret}."),
            ],
            vec![id, secret.clone()],
            true,
        ),
        variant(
            "aws secret in two halves after its key name",
            vec![
                "The current branch is aws_secret_access_key.".to_owned(),
                format!("Read file {c}."),
                format!("Next step is to edit {d}."),
            ],
            vec![c.to_owned(), d.to_owned()],
            true,
        ),
        variant(
            "github token in three clauses",
            vec![
                format!("The current branch is {}.", &gh[..14]),
                format!("Next step is to edit {}.", &gh[14..28]),
                format!("Read file {}.", &gh[28..]),
            ],
            vec![
                gh[..14].to_owned(),
                gh[14..28].to_owned(),
                gh[28..].to_owned(),
            ],
            true,
        ),
        split(
            "github token's key name as a branch, the token in two paths",
            "The current branch is github_token.",
            &format!("Qk7{}", rng.pick(ALNUM, 37)),
            2,
            "Read file",
        ),
        split(
            "openai key in three created files",
            "",
            &format!("sk-proj-{}", rng.pick(ALNUM, 48)),
            3,
            "Created file",
        ),
        split(
            "slack token over three edits",
            "",
            &format!(
                "xoxb-{}-{}-{}",
                rng.pick(b"0123456789", 12),
                rng.pick(b"0123456789", 13),
                rng.pick(ALNUM, 24)
            ),
            3,
            "Next step is to edit",
        ),
        split(
            "jwt over four paths",
            "",
            &format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.{}",
                rng.pick(ALNUM, 43)
            ),
            4,
            "Read file",
        ),
    ]
}

/// `secret` cut into `n` pieces of about equal length, one `verb` clause each, after `lead`
/// (a clause naming it, or nothing).
fn split(name: &str, lead: &str, secret: &str, n: usize, verb: &str) -> Variant {
    let width = secret.len().div_ceil(n);
    let pieces: Vec<String> = secret
        .as_bytes()
        .chunks(width)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let mut clauses: Vec<String> = Vec::new();
    if !lead.is_empty() {
        clauses.push(lead.to_owned());
    }
    clauses.extend(pieces.iter().map(|p| format!("{verb} {p}.")));
    variant(name, clauses, pieces, true)
}

/// Found missing on prose summaries: DSN user-info keys, vendor keys in bare hex or UUID form,
/// credential pairs, `-p'…'` passwords, database URLs whose password holds punctuation.
pub fn prose_credentials() -> Vec<Variant> {
    let mut rng = Rng::new(5);
    let hex = rng.pick(HEX, 32);
    let hex2 = rng.pick(HEX, 40);
    let uuid = format!(
        "{}-{}-4{}-a{}-{}",
        rng.pick(HEX, 8),
        rng.pick(HEX, 4),
        rng.pick(HEX, 3),
        rng.pick(HEX, 3),
        rng.pick(HEX, 12)
    );
    let pw = format!("Vx9{}!2q", rng.pick(ALNUM, 7));
    let prose = |name: &str, clause: String, piece: &str| {
        variant(name, vec![clause], vec![piece.to_owned()], false)
    };
    vec![
        prose(
            "sentry dsn with its key as the user-info",
            format!(
                "Configured the DSN https://{hex}@o447951.ingest.sentry.io/5512345 for the app."
            ),
            &hex,
        ),
        prose(
            "redis url whose user-info is a token",
            format!("The cache is redis://{hex2}@cache.internal:6379/0 now."),
            &hex2,
        ),
        prose(
            "datadog api key in bare hex",
            format!("The datadog api key {hex} was rotated."),
            &hex,
        ),
        prose(
            "heroku api key as a uuid",
            format!("Heroku API key {uuid} was used to deploy."),
            &uuid,
        ),
        prose(
            "pagerduty token after its name in a path",
            format!("Wrote the PagerDuty token to vault/pagerduty/{hex2} today."),
            &hex2,
        ),
        prose(
            "credentials are user and password",
            format!("The credentials are deploy and {pw}."),
            &pw,
        ),
        prose(
            "credentials as user / password",
            format!("credentials: svc_backup / {pw}"),
            &pw,
        ),
        prose(
            "login for a database as user:password",
            format!("The login for the staging db is admin:{pw}."),
            &pw,
        ),
        prose(
            "mysql -p'...'",
            format!("Ran mysql -u root -p'{pw}' app_db."),
            &pw,
        ),
        prose(
            "mysqldump -p\"...\"",
            format!("Ran mysqldump -uadmin -p\"{pw}\" shop."),
            &pw,
        ),
        prose(
            "sshpass -p'...'",
            format!("Ran sshpass -p'{pw}' ssh deploy@build01."),
            &pw,
        ),
        prose(
            "postgres url whose password holds @ : # !",
            "Connected to postgres://app:p@ss:w0rd#9!@db.internal:5432/app.".to_owned(),
            "p@ss:w0rd#9!",
        ),
        prose(
            "mysql url whose password holds & and !",
            "DATABASE_URL=mysql://svc:tr0ub4dor&3!x@10.0.0.5/prod".to_owned(),
            "tr0ub4dor&3!x",
        ),
        prose(
            "mongodb url whose password holds @",
            "The replica set is mongodb://ops:Qv7r@xLp9!z@mongo-1.internal:27017/admin.".to_owned(),
            "Qv7r@xLp9!z",
        ),
    ]
}

/// Benign look-alikes in the controlled language that must stay ACCEPTED.
pub fn benign_clauses() -> Vec<(String, Vec<String>)> {
    let mut rng = Rng::new(40);
    vec![
        (
            "a full 40-digit commit hash".to_owned(),
            vec![format!("Committed {} on branch main.", rng.pick(HEX, 40))],
        ),
        (
            "a 12-digit commit on a branch named for tokens".to_owned(),
            vec![format!(
                "Committed {} on branch fix-token-refresh.",
                rng.pick(HEX, 12)
            )],
        ),
        (
            "branch names about secrets and passwords".to_owned(),
            vec![
                "The current branch is rotate_api_key.".to_owned(),
                "Test password_reset_flow passed.".to_owned(),
                "Function secret_manager_config in src/auth/token.rs was changed.".to_owned(),
            ],
        ),
        (
            "paths under key-named directories".to_owned(),
            vec![
                "Read file docs/password/reset.md.".to_owned(),
                "Modified file src/auth/token_cache.py.".to_owned(),
                "Created file config/secrets/README.md.".to_owned(),
            ],
        ),
        (
            "identifiers with vendor prefixes in words".to_owned(),
            vec![
                "Test task_test_refund_rounding passed.".to_owned(),
                "Function ask_live_user in src/chat.py was added.".to_owned(),
                "The current branch is feature-ghp-migration.".to_owned(),
            ],
        ),
    ]
}

/// A git SSH remote is a login, not an e-mail address; the controlled language has no slot
/// for it (`:` is not a path character), so it only ever appears in prose.
pub const GIT_SSH_REMOTES: &[&str] = &[
    "Pushed the fix to git@github.com:acme/payments.git on branch main.",
    "The mirror is deploy@build01.corp.net:/srv/git/payments.git now.",
];
