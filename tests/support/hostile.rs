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

/// Vendor tokens that identify themselves by a prefix.
fn tokens(rng: &mut Rng) -> Vec<(&'static str, String)> {
    vec![
        ("github", format!("ghp_{}", rng.pick(ALNUM, 36))),
        ("gitlab", format!("glpat-{}", rng.pick(ALNUM, 20))),
        ("aws", format!("AKIA{}", rng.pick(UPPER_DIGITS, 16))),
        ("stripe", format!("sk_live_{}", rng.pick(ALNUM, 24))),
        ("openai", format!("sk-proj-{}", rng.pick(ALNUM, 48))),
        ("npm", format!("npm_{}", rng.pick(ALNUM, 36))),
        ("huggingface", format!("hf_{}", rng.pick(ALNUM, 34))),
        (
            "slack",
            format!(
                "xoxb-{}-{}-{}",
                rng.pick(b"0123456789", 12),
                rng.pick(b"0123456789", 13),
                rng.pick(ALNUM, 24)
            ),
        ),
    ]
}

/// Item 7: tokens glued to words by `_`, letters or digits, in every kind of slot. A prefix
/// of letters and digits only (`AKIA`) is glued by a symbol or a lower-case word (`token_AKIA…`,
/// `fixAKIA…`); glued after a capital or a digit it is indistinguishable from a run of random
/// text that happens to hold it, and is not tried.
pub fn glued_tokens() -> Vec<Variant> {
    let mut rng = Rng::new(7);
    let forms: [(&str, fn(&str) -> String); 7] = [
        ("branch fix_", |t| format!("The current branch is fix_{t}.")),
        ("branch _old", |t| format!("The current branch is {t}_old.")),
        ("capital before", |t| format!("The current branch is A{t}.")),
        ("token_ in a path", |t| {
            format!("Read file config/token_{t}.")
        }),
        ("key_ in a function", |t| {
            format!("Function key_{t} in src/app.py was changed.")
        }),
        ("digit before, test name", |t| {
            format!("Test t9{t}_case passed.")
        }),
        ("lower-case word before", |t| {
            format!("The current branch is fix{t}.")
        }),
    ];
    // Which forms each vendor's token takes, so that every form meets several vendors.
    let plan: [&[usize]; 8] = [
        &[2, 0, 1],
        &[3, 5],
        &[3, 6, 1],
        &[6, 4],
        &[4, 2],
        &[5, 0],
        &[1, 3],
        &[0, 6],
    ];
    let mut out = Vec::new();
    for ((vendor, t), forms_of) in tokens(&mut rng).into_iter().zip(plan) {
        for &f in forms_of {
            let (form, clause) = forms[f];
            out.push(variant(
                &format!("{vendor} token, {form}"),
                vec![clause(&t)],
                vec![t.clone()],
                true,
            ));
        }
    }
    out
}

/// Item 8: secrets in slots, their key name given by a path or an identifier.
pub fn keys_named_by_slots() -> Vec<Variant> {
    let mut rng = Rng::new(8);
    let aws = rng.pick(BASE64, 40);
    let pw = format!("Tr0{}x9", rng.pick(ALNUM, 8));
    let hex = rng.pick(HEX, 32);
    let b64 = rng.pick(ALNUM, 32);
    vec![
        variant(
            "aws secret under secret_access_key/",
            vec![format!("Read file aws/secret_access_key/{aws}.")],
            vec![aws.clone()],
            true,
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
            true,
        ),
        variant(
            "password after password_ in a branch",
            vec![format!("The current branch is password_{pw}.")],
            vec![pw.clone()],
            true,
        ),
        variant(
            "password after db.password. in a branch",
            vec![format!("The current branch is db.password.{pw}.")],
            vec![pw.clone()],
            true,
        ),
        variant(
            "password after admin_passwd- in a test name",
            vec![format!("Test admin_passwd-{pw} failed.")],
            vec![pw.clone()],
            true,
        ),
        variant(
            "password after a password directory",
            vec![format!("Read file deploy/smtp_password/{pw}.")],
            vec![pw],
            true,
        ),
    ]
}

/// Item 8: a storage key of 64 random bytes (88 base64 characters) written as a path.
pub fn azure_keys_as_paths() -> Vec<Variant> {
    let mut rng = Rng::new(88);
    [
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
            true,
        )
    })
    .collect()
}

/// Item 8: private key bodies split over many path clauses, one line of the body each.
pub fn private_keys_split_over_clauses() -> Vec<Variant> {
    let mut rng = Rng::new(10);
    let kinds = [
        ("rsa pkcs1", "MIIEowIBAAKCAQEA", 64, 10),
        (
            "rsa pkcs8",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",
            64,
            8,
        ),
        (
            "openssh",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            70,
            6,
        ),
        ("ec sec1", "MHcCAQEEI", 48, 3),
    ];
    let verbs = [
        "Read file",
        "Created file",
        "Modified file",
        "Next step is to edit",
    ];
    let mut out = Vec::new();
    for (k, (kind, head, width, lines)) in kinds.iter().enumerate() {
        let body = format!("{head}{}", rng.pick(BASE64, width * lines - head.len()));
        let pieces: Vec<String> = (0..*lines)
            .map(|i| body[i * width..(i + 1) * width].to_owned())
            .collect();
        let clauses = pieces
            .iter()
            .enumerate()
            // Ten lines of one verb, or the verbs taken in turn.
            .map(|(i, p)| format!("{} {p}.", verbs[if k == 0 { 0 } else { (i + k) % 4 }]))
            .collect();
        out.push(variant(
            &format!("{kind} key body over {lines} clauses"),
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
    ]
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
