//! The editor's files (`fs/read_text_file`, `fs/write_text_file`), when the client offers
//! both: the file tools read the editor's buffers (unsaved changes included) and write
//! through it (the edit lands in the buffer). rein's path rules apply as for the disk
//! (`rein_core::tools::editor`).

use std::path::Path;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use rein_core::tools::editor::EditorFiles;

/// The client's files for one session.
pub struct ClientFiles {
    pub cx: ConnectionTo<Client>,
    pub session: String,
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl EditorFiles for ClientFiles {
    async fn read(&self, path: &Path) -> Result<String, String> {
        let request = ReadTextFileRequest::new(self.session.clone(), path);
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map(|r| r.content)
            .map_err(|e| e.to_string())
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        let request = WriteTextFileRequest::new(self.session.clone(), path, text);
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
