#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

#[test]
fn the_options_are_everything_before_the_last_dashes_and_the_command() {
    let argv = os(&["--ro-bind", "/", "/", "--", "--", "/bin/echo", "--"]);
    let command = os(&["--", "/bin/echo", "--"]);
    // The command may itself start with `--`: only the list's own `--` separates.
    assert_eq!(
        options_before_command(&argv, &command).unwrap(),
        os(&["--ro-bind", "/", "/"]).as_slice()
    );
    assert!(options_before_command(&argv, &os(&["/bin/echo"])).is_none());
    assert!(options_before_command(&os(&["/bin/true"]), &os(&["/bin/true"])).is_none());
}

#[test]
fn the_stream_ends_every_argument_with_a_nul_and_refuses_one_holding_a_nul() {
    assert_eq!(
        nul_separated(&os(&["--chdir", "/a b", ""])).unwrap(),
        b"--chdir\0/a b\0\0".to_vec()
    );
    assert!(nul_separated(&[OsString::from("a\0b")]).is_none());
}

#[test]
fn a_pipe_grows_to_hold_a_long_list_and_refuses_one_beyond_the_limit() {
    let (_reader, writer) = io::pipe().unwrap();
    let writer = File::from(OwnedFd::from(writer));
    assert!(fits(&writer, 1000));
    assert!(fits(&writer, 200_000));
    // SAFETY: reads the pipe size of a descriptor owned above.
    #[allow(unsafe_code)]
    let size = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_GETPIPE_SZ) };
    assert!(size >= 200_000, "{size}");
    assert!(!fits(&writer, MAX_STREAM + 1));
}

#[test]
fn the_options_arrive_whole_and_end_the_stream() {
    let mut pipe = ArgsPipe::open().unwrap();
    let mut reader = File::from(pipe.take_reader().unwrap());
    let command = os(&["/bin/true"]);
    assert_eq!(
        pipe.send(&os(&["--ro-bind", "/", "/", "--", "/bin/sh"]), &command),
        Err(NotSent::OtherCommand)
    );
    pipe.send(&os(&["--ro-bind", "/", "/", "--", "/bin/true"]), &command)
        .unwrap();
    assert_eq!(
        pipe.send(&os(&["--", "/bin/true"]), &command),
        Err(NotSent::Sent)
    );
    let mut stream = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut stream).unwrap();
    assert_eq!(
        stream,
        b"--ro-bind\0/\0/\0".to_vec(),
        "and end of file after it"
    );
}
